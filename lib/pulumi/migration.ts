/**
 * `RayServiceMigration`: the dynamic resource of executor `pulumi`. Its provider runs the stepwise
 * migration inside `pulumi up` (see `migration-operations.ts`). The provider is serialized into
 * the state, so it captures nothing but the path of its operations module and loads it inside
 * each method; the connection comes from the inputs (`kubeconfig`, a secret) or the stack
 * configuration (`rayshift:kubeconfig`, `rayshift:context`), else the default kubeconfig lookup.
 */
import * as pulumi from '@pulumi/pulumi';
import { RayServiceSpec } from '../spec/rayservice';
import { ClusterConnectionArgs, connectionInputs } from './dynamic-args';
import { DeadlineAction, MIGRATION_DEFAULTS, MigrationInputs, MigrationOutputs } from './migration-inputs';
import type * as operations from './migration-operations';
import { operationsProvider, runtimeModulePath } from './provider-module';

/** Inputs of a `RayServiceMigration` (the connection, `kubeconfig` and `context`, as every dynamic resource's). */
export interface RayServiceMigrationArgs extends ClusterConnectionArgs {
  /** RayService name. */
  readonly name: pulumi.Input<string>;
  /** Namespace. */
  readonly namespace: pulumi.Input<string>;
  /** The validated `rayshift.dev/v1alpha1` spec. */
  readonly spec: pulumi.Input<RayServiceSpec>;
  /** Labels of the service's record, copied to its clusters. @default none */
  readonly labels?: pulumi.Input<Record<string, string>>;
  /** Dashboard address template with `{namespace}` and `{cluster}`. @default KubeRay's in-cluster head Service */
  readonly dashboardAddressTemplate?: pulumi.Input<string>;
  /** Seconds one `pulumi up` may spend on the migration. @default 3600 */
  readonly deadlineSeconds?: pulumi.Input<number>;
  /** What happens when the deadline passes mid-upgrade. @default "rollback" */
  readonly onDeadline?: pulumi.Input<DeadlineAction>;
  /** Poll period while waiting for Serve capacity, ms. @default 1000 */
  readonly capacityPollMs?: pulumi.Input<number>;
}

/** The running service of executor `pulumi` (type `pulumi-nodejs:dynamic/rayshift:RayServiceMigration`). */
export class RayServiceMigration extends pulumi.dynamic.Resource {
  /** The record ConfigMap holding spec, status and the checkpoint. */
  declare readonly recordName: pulumi.Output<string>;
  /** The serving RayCluster. */
  declare readonly activeClusterName: pulumi.Output<string | undefined>;
  /** Route weight of the serving cluster. */
  declare readonly activeWeight: pulumi.Output<number>;
  /** Serve `target_capacity` of the serving cluster. */
  declare readonly activeTargetCapacity: pulumi.Output<number>;
  /** Engine phase. */
  declare readonly phase: pulumi.Output<string>;
  /** Engine reason. */
  declare readonly reason: pulumi.Output<string>;
  /** Steps the last run carried out. */
  declare readonly stepsLastRun: pulumi.Output<number>;

  constructor(name: string, args: RayServiceMigrationArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      operationsProvider<MigrationInputs, MigrationOutputs, typeof operations>(runtimeModulePath('migration-operations'), ['read', 'delete']),
      name,
      {
        name: args.name,
        namespace: args.namespace,
        spec: args.spec,
        labels: args.labels ?? {},
        dashboardAddressTemplate: args.dashboardAddressTemplate,
        deadlineSeconds: args.deadlineSeconds ?? MIGRATION_DEFAULTS.deadlineSeconds,
        onDeadline: args.onDeadline ?? MIGRATION_DEFAULTS.onDeadline,
        capacityPollMs: args.capacityPollMs ?? MIGRATION_DEFAULTS.capacityPollMs,
        ...connectionInputs(args),
        recordName: undefined,
        activeClusterName: undefined,
        activeWeight: undefined,
        activeTargetCapacity: undefined,
        phase: undefined,
        reason: undefined,
        stepsLastRun: undefined,
      },
      opts,
      'rayshift',
      'RayServiceMigration',
    );
  }
}
