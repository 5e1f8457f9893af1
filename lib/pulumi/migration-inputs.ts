/** Inputs and outputs of the Pulumi executor's dynamic resource (`RayServiceMigration`), plain JSON. */
import type { RayServiceSpec } from '../spec/rayservice';

/** What a run does when its deadline passes mid-upgrade. */
export type DeadlineAction =
  /** Roll the upgrade back (all traffic and capacity to the old cluster), then fail. */
  | 'rollback'
  /** Hold the upgrade at its current step (weights and capacities consistent), then fail; the next `pulumi up` resumes it. */
  | 'pause';

/** Every deadline action. */
export const DEADLINE_ACTIONS: readonly DeadlineAction[] = ['rollback', 'pause'];

/** Defaults of the run settings of every dynamic resource that drives or follows a rollout during `pulumi up`. */
export const MIGRATION_DEFAULTS = {
  /** Seconds one `pulumi up` may spend driving (or following) a rollout. */
  deadlineSeconds: 3600,
  onDeadline: 'rollback' as DeadlineAction,
  /** Poll period while waiting for Serve capacity, ms. */
  capacityPollMs: 1000,
  /** Poll period while following KubeRay's or the operator's upgrade (`UpgradeProgress`), ms. */
  progressPollMs: 2000,
  /** Poll period while waiting for RBG's controller to move the workloads (`RoleBasedGroupRollout`), ms. */
  rolloutPollMs: 1000,
} as const;

/** Inputs of `RayServiceMigration` as the provider receives them (secrets unwrapped). */
export interface MigrationInputs {
  /** RayService name (clusters are `<name>-xxxxx`, the record `<name>-rayshift`). */
  readonly name: string;
  /** Namespace of everything the service owns. */
  readonly namespace: string;
  /** The `rayshift.dev/v1alpha1` spec, validated by the model. */
  readonly spec: RayServiceSpec;
  /** Labels of the record, copied to the clusters. */
  readonly labels: Readonly<Record<string, string>>;
  /** Kubeconfig text (a secret input; never an output). */
  readonly kubeconfig?: string;
  /** Kubeconfig context. */
  readonly context?: string;
  /** Dashboard address template (`http://…/{namespace}/{cluster}`). */
  readonly dashboardAddressTemplate?: string;
  /** Seconds one `pulumi up` may spend on the migration. */
  readonly deadlineSeconds: number;
  /** What happens on the deadline. */
  readonly onDeadline: DeadlineAction;
  /** Poll period while waiting for Serve capacity, ms. */
  readonly capacityPollMs: number;
}

/** Outputs of `RayServiceMigration`: the inputs that shape the service (no kubeconfig) and where the migration stands. */
export interface MigrationOutputs extends Omit<MigrationInputs, 'kubeconfig'> {
  /** The record ConfigMap (spec, status, checkpoint). */
  readonly recordName: string;
  /** The serving RayCluster. */
  readonly activeClusterName?: string;
  /** Route weight of the serving cluster, percent. */
  readonly activeWeight: number;
  /** Serve `target_capacity` of the serving cluster, percent. */
  readonly activeTargetCapacity: number;
  /** Engine phase and reason, e.g. `Running/UpToDate`. */
  readonly phase: string;
  /** Engine reason. */
  readonly reason: string;
  /** Steps the last run carried out. */
  readonly stepsLastRun: number;
}

/** The input properties of `RayServiceMigration` whose change needs a new service (create, then delete the old one). */
export const REPLACING_INPUTS = ['name', 'namespace'] as const;
