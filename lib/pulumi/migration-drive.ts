/**
 * The Pulumi executor's run: `RayServiceReconciler` passes over a service's record, driven by the
 * runtime's one loop (`driveUntilSettled`: each pass at its due time, the run's deadline) until the
 * engine says the migration settled. Every pass starts from the record, so a run killed anywhere
 * resumes on the next `pulumi up` exactly where the record says, no step skipped or repeated.
 */
import { clusterSpecHash } from '../engine/cluster-hash';
import { deadlineChoice } from '../engine/driver-rules';
import { RayServiceStatus, describeStatus, isGoalGivenUp, isSettled } from '../engine/status';
import { driveUntilSettled } from '../runtime/drive';
import { KubeClient } from '../runtime/kube/client';
import { RayServiceReconciler } from '../runtime/rayservice/reconciler';
import { ABORT_ANNOTATION, PAUSE_ANNOTATION } from '../engine/steering';
import { ServeDashboardClient } from '../runtime/serve/client';
import { RayServiceSpec } from '../spec/rayservice';
import { DeadlineAction } from './migration-inputs';
import { readRecord, recordStore, serviceOfRecord, setRecordAnnotation } from './service-record';
import { eventLine, stepLine } from './step-line';

/** Settings of one run. */
export interface DriveOptions {
  /** When the run must end (epoch ms). */
  readonly deadlineAt: number;
  /** What happens at the deadline. */
  readonly onDeadline: DeadlineAction;
  /** Poll period while waiting for Serve capacity, ms. */
  readonly capacityPollMs: number;
  /** Where step lines go. */
  readonly log: (line: string) => void;
}

/** The end of a run. */
export interface DriveResult {
  /** The engine status the run ended with. */
  readonly status: RayServiceStatus;
  /** Passes that carried out actions. */
  readonly steps: number;
}

/**
 * Drives the service `namespace/name` (its record must exist) until it settles. Resolves with the
 * final status; rejects with the reason when the model rejects the spec, when the engine gives the
 * spec up (abort, progress deadline) or when the run's deadline passes (after rolling back or
 * pausing, per `onDeadline`).
 */
export async function driveMigration(client: KubeClient, serve: ServeDashboardClient, namespace: string, name: string, options: DriveOptions): Promise<DriveResult> {
  const record = await readRecord(client, namespace, name);
  if (!record) throw new Error(`RayService ${namespace}/${name}: its record is missing`);
  const spec = serviceOfRecord(record, name).spec as RayServiceSpec;
  const goal = clusterSpecHash(spec.rayClusterConfig as never);
  const reconciler = new RayServiceReconciler({ client, serve, store: recordStore(client), capacityPollMs: options.capacityPollMs });
  let steps = 0;
  let deadlineHit: string | undefined;
  let last: RayServiceStatus | undefined;
  return driveUntilSettled<DriveResult>(
    async () => {
      const result = await reconciler.reconcile(namespace, name);
      const status = result.status;
      if (!status) throw new Error(`RayService ${namespace}/${name} rejected: ${await rejection(client, namespace, name)}`);
      last = status;
      // Measurements are reads: their outcome shows as the verdict line, not as a step.
      const moves = result.actions.filter((a) => a.type !== 'measureAnalysis');
      if (moves.length > 0) {
        steps++;
        options.log(stepLine(name, moves, status, Date.now()));
      }
      for (const e of result.events ?? []) options.log(eventLine(name, e, Date.now()));
      if (!isSettled(status, result.actions.length)) return { settled: false, ...(result.requeueAt !== undefined ? { wakeAt: result.requeueAt } : {}) };
      if (deadlineHit) throw new Error(`RayService ${namespace}/${name}: ${deadlineHit}; rolled back: ${describeStatus(status)}`);
      if (isGoalGivenUp(status, goal)) {
        const what = status.phase === 'Failed' ? `was not started (${status.reason}: ${status.capacity?.message ?? ''})` : `was given up (${status.reason}) and rolled back`;
        throw new Error(`RayService ${namespace}/${name}: the upgrade ${what}; change the cluster spec to try again: ${describeStatus(status)}`);
      }
      return { settled: true, result: { status, steps } };
    },
    {
      deadlineAt: options.deadlineAt,
      pollMs: options.capacityPollMs,
      onDeadline: async () => {
        const status = last!;
        deadlineHit = `the deadline passed at ${describeStatus(status)}`;
        if (deadlineChoice(options.onDeadline, status) === 'pause') {
          await setRecordAnnotation(client, namespace, name, PAUSE_ANNOTATION, 'true');
          const paused = await reconciler.reconcile(namespace, name);
          throw new Error(`RayService ${namespace}/${name}: ${deadlineHit}; held at ${paused.status ? describeStatus(paused.status) : 'its last step'} (the next pulumi up resumes)`);
        }
        options.log(`${new Date().toISOString().slice(11, 19)} ${name} deadline passed: rolling back`);
        await setRecordAnnotation(client, namespace, name, ABORT_ANNOTATION, 'true');
      },
    },
  );
}

/** Why the reconciler rejected the spec, as it recorded it in the status. */
async function rejection(client: KubeClient, namespace: string, name: string): Promise<string> {
  const record = await readRecord(client, namespace, name);
  const status = record ? (serviceOfRecord(record, name).status as { message?: string }) : undefined;
  return status?.message ?? 'the record is gone';
}
