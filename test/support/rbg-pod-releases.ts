/**
 * What a RoleBasedGroup's Ready Pods run, read from the Pods themselves (not from any workload's
 * counts): the cluster suites' proof that a rollback left no replica on the abandoned release. Test
 * support, not the package's API.
 */
import type { KubeClient } from '../../lib/runtime/kube/client';
import { KnownTypes } from '../../lib/runtime/kube/types';
import { VERSION_LABEL } from './simulated-pod-metrics';

/** The releases the Ready pods of group `name` carry, as `<version label>/<image tag>`, counted (`v1/v1: 6`). */
export async function readyPodReleases(admin: KubeClient, namespace: string, name: string): Promise<Record<string, number>> {
  const pods = await admin.list(KnownTypes.Pod, { namespace });
  const counts: Record<string, number> = {};
  for (const p of pods.items) {
    if (!String(p.metadata.name).startsWith(`${name}-`) || p.metadata.deletionTimestamp) continue;
    const ready = ((p.status as { conditions?: { type: string; status: string }[] })?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
    if (!ready) continue;
    const image = String(((p.spec as { containers?: { image?: string }[] })?.containers ?? [])[0]?.image ?? '?').replace('sglang:', '');
    const v = `${p.metadata.labels?.[VERSION_LABEL] ?? '?'}/${image}`;
    counts[v] = (counts[v] ?? 0) + 1;
  }
  return counts;
}
