/**
 * `RoleBasedGroupRollout`: the dynamic resource of a RoleBasedGroup with executor `pulumi`; its
 * provider runs the coordinated rolling update during `pulumi up` (see
 * `rbg-rollout-operations.ts`). Serialized like `RayServiceMigration`: it captures only a module path.
 */
import * as pulumi from '@pulumi/pulumi';
import { MIGRATION_DEFAULTS } from './migration-inputs';
import { operationsProvider, runtimeModulePath } from './provider-module';
import type * as operations from './rbg-rollout-operations';
import type { RbgRolloutInputs, RbgRolloutOutputs } from './rbg-rollout-operations';

/** Inputs of a `RoleBasedGroupRollout`. */
export interface RoleBasedGroupRolloutArgs {
  /** The group's API version. */
  readonly apiVersion: pulumi.Input<string>;
  /** Group name. */
  readonly name: pulumi.Input<string>;
  /** Namespace. */
  readonly namespace: pulumi.Input<string>;
  /** Hash of the group's spec. */
  readonly specHash: pulumi.Input<string>;
  /** Seconds one `pulumi up` may spend on the rollout. @default 3600 */
  readonly deadlineSeconds?: pulumi.Input<number>;
  /** Poll period, ms. @default 1000 */
  readonly pollMs?: pulumi.Input<number>;
  /** Kubeconfig text; stored as a secret, never an output. @default stack config `rayshift:kubeconfig`, else `$KUBECONFIG` */
  readonly kubeconfig?: pulumi.Input<string>;
  /** Kubeconfig context. */
  readonly context?: pulumi.Input<string>;
}

/** Runs a RoleBasedGroup's coordinated rollout during `pulumi up` (type `pulumi-nodejs:dynamic/rayshift:RoleBasedGroupRollout`). */
export class RoleBasedGroupRollout extends pulumi.dynamic.Resource {
  /** Rounds the last run wrote. */
  declare readonly roundsLastRun: pulumi.Output<number>;

  constructor(name: string, args: RoleBasedGroupRolloutArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      operationsProvider<RbgRolloutInputs, RbgRolloutOutputs, typeof operations>(runtimeModulePath('rbg-rollout-operations')),
      name,
      {
        apiVersion: args.apiVersion,
        name: args.name,
        namespace: args.namespace,
        specHash: args.specHash,
        deadlineSeconds: args.deadlineSeconds ?? MIGRATION_DEFAULTS.deadlineSeconds,
        pollMs: args.pollMs ?? MIGRATION_DEFAULTS.rolloutPollMs,
        context: args.context,
        kubeconfig: args.kubeconfig === undefined ? undefined : pulumi.secret(args.kubeconfig),
        roundsLastRun: undefined,
      },
      opts,
      'rayshift',
      'RoleBasedGroupRollout',
    );
  }
}
