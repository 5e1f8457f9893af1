/**
 * `UpgradeProgress`: a read-only dynamic resource that makes `pulumi up` follow an upgrade a
 * controller runs (KubeRay for executor `kuberay`, the rayshift operator for `operator`),
 * printing weights and capacities from the RayService's status until the upgrade completes or
 * the deadline passes. Serialized like `RayServiceMigration`: it captures only a module path.
 */
import * as pulumi from '@pulumi/pulumi';
import { MIGRATION_DEFAULTS } from './migration-inputs';
import { operationsProvider, runtimeModulePath } from './provider-module';
import type * as operations from './upgrade-progress-operations';
import type { ProgressInputs, ProgressOutputs } from './upgrade-progress-operations';

/** Inputs of an `UpgradeProgress`. */
export interface UpgradeProgressArgs {
  /** `ray.io/v1` or `rayshift.dev/v1alpha1`. */
  readonly apiVersion: pulumi.Input<string>;
  /** RayService name. */
  readonly name: pulumi.Input<string>;
  /** Namespace. */
  readonly namespace: pulumi.Input<string>;
  /** Hash of the goal cluster spec (`clusterSpecHash`). */
  readonly goalSpecHash: pulumi.Input<string>;
  /** Seconds to follow an upgrade before failing. @default 3600 */
  readonly deadlineSeconds?: pulumi.Input<number>;
  /** Poll period, ms. @default 2000 */
  readonly pollMs?: pulumi.Input<number>;
  /** Kubeconfig text; stored as a secret, never an output. @default stack config `rayshift:kubeconfig`, else `$KUBECONFIG` */
  readonly kubeconfig?: pulumi.Input<string>;
  /** Kubeconfig context. */
  readonly context?: pulumi.Input<string>;
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
      {
        apiVersion: args.apiVersion,
        name: args.name,
        namespace: args.namespace,
        goalSpecHash: args.goalSpecHash,
        deadlineSeconds: args.deadlineSeconds ?? MIGRATION_DEFAULTS.deadlineSeconds,
        pollMs: args.pollMs ?? MIGRATION_DEFAULTS.progressPollMs,
        context: args.context,
        kubeconfig: args.kubeconfig === undefined ? undefined : pulumi.secret(args.kubeconfig),
        activeClusterName: undefined,
        movesSeen: undefined,
      },
      opts,
      'rayshift',
      'UpgradeProgress',
    );
  }
}
