/**
 * The capacity policy of a RayService (`spec.rayshift.capacityPolicy`): what an upgrade whose new
 * Pods do not fit the cluster does, the warning `shrinkFirst` earns, and the checks of the policy
 * against the upgrade options it needs.
 */
import { type ProblemList, checkOneOf, show } from './problem';
import { INT32_MAX, isInteger } from './read';

/**
 * What an upgrade does when the capacity preflight finds that its new cluster's first Pods do not
 * fit the cluster now: `wait` starts it anyway (its Pods wait Pending for the scheduler, as KubeRay's
 * do) with the reason in the status and an Event; `fail` does not start it (phase `Failed`, no
 * pending cluster) until the spec changes; `shrinkFirst` (NewClusterWithIncrementalUpgrade only),
 * when the Pods fit once the old cluster shrinks, runs the upgrade without a surge: the old cluster
 * gives back `maxSurgePercent` of its capacity before the new one takes it, so the service runs at
 * 100 − maxSurgePercent during each step (it trades availability for accelerators); when they do
 * not fit even then, it refuses the upgrade as `fail` does. A surge that fits runs as usual under every policy.
 * When the executor cannot read the cluster for the preflight (no `list` on nodes, pods, resourcequotas
 * or limitranges), `wait` starts the upgrade with a Warning Event, and `fail` and `shrinkFirst` hold it
 * (reason `CapacityUnknown`) and read again until a read decides.
 */
export type CapacityPolicy = 'wait' | 'fail' | 'shrinkFirst';

/** Every capacity policy. */
export const CAPACITY_POLICIES: readonly CapacityPolicy[] = ['wait', 'fail', 'shrinkFirst'];

/**
 * The capacity policies of a RoleBasedGroup rule's rayshift executor: what a rollout whose first
 * round does not fit the cluster does (`wait`: start it and report it; `fail`: do not start it, until
 * the template changes again), and one whose Pods stay Unschedulable past `surgeUnschedulableSeconds`
 * (`wait`: report it and keep waiting; `fail`: roll every coordinated role back). When the cluster
 * cannot be read for the preflight, `wait` releases the round with a Warning Event and `fail` holds it
 * (reason `CapacityUnknown`) and reads again. `shrinkFirst`, the
 * RayService's upgrade without a surge, has no RoleBasedGroup counterpart.
 */
export type RbgCapacityPolicy = Extract<CapacityPolicy, 'wait' | 'fail'>;

/** Every capacity policy of a RoleBasedGroup rule. */
export const RBG_CAPACITY_POLICIES: readonly RbgCapacityPolicy[] = ['wait', 'fail'];

/**
 * The defaults of the scheduler watch, one home for the RayService (`RAY_SERVICE_DEFAULTS`) and a
 * RoleBasedGroup rule (`RBG_EXECUTOR_DEFAULTS`): `wait` is what an upgrade did before the watch
 * existed, and 120 s leaves a node autoscaler time to add a node before a surge is reported.
 */
export const SURGE_WATCH_DEFAULTS = {
  capacityPolicy: 'wait' as RbgCapacityPolicy,
  surgeUnschedulableSeconds: 120,
} as const;

/**
 * The check of a `surgeUnschedulableSeconds` at `at`: an integer from 1 to 2147483647 (int32,
 * the CRD's type) when set.
 */
export function checkSurgeUnschedulableSeconds(problems: ProblemList, at: string, value: unknown): void {
  if (value !== undefined && (!isInteger(value) || value < 1 || value > INT32_MAX)) {
    problems.error(at, `must be an integer from 1 to ${INT32_MAX} (int32); got ${show(value)}`);
  }
}

/** The warning every `shrinkFirst` service gets: what it trades, with the service's own numbers. */
export function shrinkFirstNote(maxSurgePercent: number): string {
  return `trades availability for accelerators: when the new Pods fit only once the old cluster shrinks, each step first lowers the old cluster's capacity by maxSurgePercent ${maxSurgePercent}, so the service runs at ${100 - maxSurgePercent}% until the new cluster's Pods are ready (\`rayshift plan\` shows the dips)`;
}

/**
 * The checks of `spec.rayshift.capacityPolicy`: one of {@link CAPACITY_POLICIES}, and for `shrinkFirst`
 * an incremental upgrade (`options`, its clusterUpgradeOptions; undefined for another strategy) whose
 * surge (unset: `defaultMaxSurgePercent`) leaves something serving.
 */
export function checkCapacityPolicy(problems: ProblemList, policy: unknown, options: Record<string, unknown> | undefined, defaultMaxSurgePercent: number): void {
  checkOneOf(problems, 'spec.rayshift.capacityPolicy', policy, CAPACITY_POLICIES, 'a capacity policy');
  if (policy === 'shrinkFirst') checkShrinkFirst(problems, options, defaultMaxSurgePercent);
}

/**
 * `shrinkFirst` lowers the old cluster by maxSurgePercent before the new cluster has any capacity,
 * so it needs an incremental upgrade and a step below 100 (100 would leave nothing serving).
 */
function checkShrinkFirst(problems: ProblemList, options: Record<string, unknown> | undefined, defaultMaxSurgePercent: number): void {
  const at = 'spec.rayshift.capacityPolicy';
  if (options === undefined) {
    problems.error(at, '"shrinkFirst" shrinks the old cluster a step at a time, so it needs upgradeStrategy.type NewClusterWithIncrementalUpgrade');
    return;
  }
  const surge = options.maxSurgePercent ?? defaultMaxSurgePercent;
  if (!isInteger(surge) || surge < 1 || surge > 100) return;
  if (surge === 100) {
    problems.error(
      'spec.upgradeStrategy.clusterUpgradeOptions.maxSurgePercent',
      `is 100 with capacityPolicy shrinkFirst, which lowers the old cluster by maxSurgePercent before the new one has any capacity, so nothing would serve; must be an integer from 1 to 99 (${surge === defaultMaxSurgePercent && options.maxSurgePercent === undefined ? 'the default is 100' : 'got 100'})`,
    );
    return;
  }
  problems.warning(at, `"shrinkFirst" ${shrinkFirstNote(surge)}`);
}

/**
 * Throws a `RangeError` naming the field, the value and the allowed range when resolved options
 * carry a capacity policy that is none, or `shrinkFirst` on an incremental upgrade whose surge is 100
 * (the guard of hand-built options; `checkCapacityPolicy` reports the same to users first).
 */
export function assertCapacityPolicy(o: { readonly strategy: string; readonly capacityPolicy?: CapacityPolicy; readonly maxSurgePercent: number }): void {
  if (o.capacityPolicy !== undefined && !CAPACITY_POLICIES.includes(o.capacityPolicy)) {
    throw new RangeError(`capacityPolicy is ${String(o.capacityPolicy)}; allowed: ${CAPACITY_POLICIES.join(', ')}`);
  }
  if (o.capacityPolicy === 'shrinkFirst' && o.strategy === 'NewClusterWithIncrementalUpgrade' && o.maxSurgePercent === 100) {
    throw new RangeError('maxSurgePercent is 100 with capacityPolicy shrinkFirst; allowed: 1–99 (the old cluster gives back maxSurgePercent before the new one has capacity)');
  }
}
