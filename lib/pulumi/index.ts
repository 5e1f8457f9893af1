/** Pulumi components of rayshift and the dynamic resources that execute and follow upgrades during `pulumi up`. */
export * from './gateway';
export * from './route';
export * from './rolebasedgroup';
export * from './rayservice';
export * from './migration';
export * from './migration-inputs';
export * from './upgrade-progress';
export * from './rbg-rollout';
export type { ClusterConnectionArgs, FollowedRolloutArgs } from './dynamic-args';
export { synthesizeValidated } from './manifests';
export type { Manifest } from './manifests';
export { RECORD_LABEL, recordName } from './record-name';
