/**
 * `UpgradeProgress`: a read-only dynamic resource that makes `pulumi up` follow an upgrade a
 * controller runs (KubeRay for executor `kuberay`, the rayshift operator for `operator`),
 * printing weights and capacities from the RayService's status until the upgrade completes or
 * the deadline passes. Serialized like `RayServiceMigration`: it captures only a module path.
 */
import * as pulumi from '@pulumi/pulumi';
import { FollowedRolloutArgs, followedRolloutInputs } from './dynamic-args';
import { MIGRATION_DEFAULTS } from './migration-inputs';
import { operationsProvider, runtimeModulePath } from './provider-module';
import type * as operations from './upgrade-progress-operations';
import type { ProgressInputs, ProgressOutputs } from './upgrade-progress-operations';

/** Inputs of an `UpgradeProgress`: the RayService (its `apiVersion`, `name`, `namespace`), the deadline and the connection, and: */
export interface UpgradeProgressArgs extends FollowedRolloutArgs {
  /** Hash of the goal cluster spec (`clusterSpecHash`). */
  readonly goalSpecHash: pulumi.Input<string>;
  /** Poll period, ms. @default 2000 */
  readonly pollMs?: pulumi.Input<number>;
}

/** Follows a controller-driven upgrade (type `pulumi-nodejs:dynamic/rayshift:UpgradeProgress`). */
export class UpgradeProgress extends pulumi.dynamic.Resource {
  /** The serving RayCluster when the upgrade completed. */
  declare readonly activeClusterName: pulumi.Output<string | undefined>;
  /** Changes of weights or capacities seen while following. */
  declare readonly movesSeen: pulumi.Output<number>;

  constructor(name: string, args: UpgradeProgressArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      operationsProvider<ProgressInputs, ProgressOutputs, typeof operations>(runtimeModulePath('upgrade-progress-operations')),
      name,
      { ...followedRolloutInputs(args, MIGRATION_DEFAULTS.progressPollMs), goalSpecHash: args.goalSpecHash, activeClusterName: undefined, movesSeen: undefined },
      opts,
      'rayshift',
      'UpgradeProgress',
    );
  }
}
