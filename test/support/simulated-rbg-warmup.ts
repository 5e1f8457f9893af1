/**
 * TEST-ONLY: a status writer standing in for RBG v0.8's RoleBasedGroupWarmup controller, which is
 * not buildable here (and there are no kubelets to run its warmup Pods). The test decides what the
 * warmup reports — RBG's node counts and its terminal phase with its condition — and this writes it
 * to the warmup's status subresource on the real API server, in the shape RBG v0.8.0-alpha.5's
 * `updateStatus` / `failWarmupJob` write it (`phase`, `desired`, `active`, `succeeded`, `failed`,
 * `startTime`, `completionTime`, a `Complete` or `Failed` condition).
 */
import { KubeClient } from '../../lib/runtime/kube/client';
import { KubeObject } from '../../lib/runtime/kube/types';
import { WARMUP_TYPE } from '../../lib/spec/object-names';
import { waitFor } from './wait-at-most';

/** What the simulated warmup controller reports. */
export interface SimulatedWarmupStatus {
  readonly phase: 'Running' | 'Completed' | 'Failed';
  readonly desired: number;
  readonly succeeded: number;
  readonly failed?: number;
  /** Reason and message of the Failed condition. */
  readonly failure?: { readonly reason: string; readonly message: string };
}

/** Waits until a warmup named with `prefix` exists in `namespace` (created by the executor) and returns it. */
export async function warmupCreated(client: KubeClient, namespace: string, prefix: string, timeoutMs = 60_000): Promise<KubeObject> {
  let found: KubeObject | undefined;
  await waitFor(async () => {
    found = (await client.list(WARMUP_TYPE, { namespace })).items.find((w) => String(w.metadata.name).startsWith(prefix));
    return found !== undefined;
  }, `a RoleBasedGroupWarmup ${prefix}* in ${namespace}`, { timeoutMs, everyMs: 100 });
  return found!;
}

/** TEST-ONLY: writes `s` as the warmup's status, as RBG's warmup controller would. */
export async function writeWarmupStatus(client: KubeClient, namespace: string, name: string, s: SimulatedWarmupStatus): Promise<void> {
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  const failed = s.failed ?? 0;
  const terminal = s.phase !== 'Running';
  const condition = s.phase === 'Completed'
    ? { type: 'Complete', status: 'True', reason: 'WarmupCompleted', message: `${s.succeeded}/${s.desired} nodes warmed up successfully`, lastTransitionTime: now }
    : s.phase === 'Failed'
      ? { type: 'Failed', status: 'True', reason: s.failure?.reason ?? 'MaxFailedNodesExceeded', message: s.failure?.message ?? `${failed} nodes failed`, lastTransitionTime: now }
      : undefined;
  const status = {
    phase: s.phase,
    desired: s.desired,
    active: terminal ? 0 : s.desired - s.succeeded - failed,
    succeeded: s.succeeded,
    failed,
    startTime: now,
    ...(terminal ? { completionTime: now } : {}),
    ...(condition ? { conditions: [condition] } : {}),
  };
  await client.patchMerge(WARMUP_TYPE, name, namespace, { status }, { subresource: 'status' });
}
