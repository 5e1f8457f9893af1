/**
 * `RoleBasedGroupRollout`: the dynamic resource of a RoleBasedGroup with executor `pulumi`; its
 * provider runs the coordinated rolling update during `pulumi up` (see
 * `rbg-rollout-operations.ts`). Serialized like `RayServiceMigration`: it captures only a module path.
 */
import * as pulumi from '@pulumi/pulumi';
import { FollowedRolloutArgs, followedRolloutInputs } from './dynamic-args';
import { MIGRATION_DEFAULTS } from './migration-inputs';
import { operationsProvider, runtimeModulePath } from './provider-module';
import type * as operations from './rbg-rollout-operations';
import type { RbgRolloutInputs, RbgRolloutOutputs } from './rbg-rollout-operations';

/** Inputs of a `RoleBasedGroupRollout`: the group (its `apiVersion`, `name`, `namespace`), the deadline and the connection, and: */
export interface RoleBasedGroupRolloutArgs extends FollowedRolloutArgs {
  /** Hash of the group's spec. */
  readonly specHash: pulumi.Input<string>;
  /** Poll period, ms. @default 1000 */
  readonly pollMs?: pulumi.Input<number>;
}

/** Runs a RoleBasedGroup's coordinated rollout during `pulumi up` (type `pulumi-nodejs:dynamic/rayshift:RoleBasedGroupRollout`). */
export class RoleBasedGroupRollout extends pulumi.dynamic.Resource {
  /** Rounds the last run wrote. */
  declare readonly roundsLastRun: pulumi.Output<number>;

  constructor(name: string, args: RoleBasedGroupRolloutArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      operationsProvider<RbgRolloutInputs, RbgRolloutOutputs, typeof operations>(runtimeModulePath('rbg-rollout-operations')),
      name,
      { ...followedRolloutInputs(args, MIGRATION_DEFAULTS.rolloutPollMs), specHash: args.specHash, roundsLastRun: undefined },
      opts,
      'rayshift',
      'RoleBasedGroupRollout',
    );
  }
}
