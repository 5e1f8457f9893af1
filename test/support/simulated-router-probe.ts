/**
 * TEST-ONLY "router readiness probe": kwok runs no kubelet, so a router Pod on a kwok Node would be
 * Ready at once, whatever its container's readiness probe says, and an executor that waits for the
 * router Deployment to be ready would wait for nothing. The routers themselves are real processes
 * on this host (test/support/sglang-router.ts, one per release), so this puts the kubelet's probe at
 * the narrowest seam: the rendered router Deployment gets a readiness gate
 * (`withSimulatedProbeGate`), which keeps its Pods not Ready under kwok's stages
 * (test/support/kwok-stages.yaml) until the gate's condition is True, and this loop probes, for each
 * router Pod, the real router of the Pod's release (its `rayshift.dev/router-revision` label) at the
 * path of the Deployment's own `readinessProbe.httpGet`, and writes the gate's condition (and Ready,
 * when the probe fails) as a kubelet writes Ready. The period is 250 ms instead of the rendered one:
 * test time, compressed. Of lib/ it imports only the Kubernetes client and name constants.
 */
import type { KubeClient } from '../../lib/runtime/kube/client';
import type { KubeObject } from '../../lib/runtime/kube/types';
import { POD, ROUTER_REVISION_LABEL } from '../../lib/spec/object-names';
import { httpGet } from './processes';

/** The condition type of the simulated probe's readiness gate. */
export const SIMULATED_PROBE_GATE = 'test.rayshift.dev/router-probe';

const PERIOD_MS = 250;

/** A copy of the rendered router Deployment `deployment` whose Pods wait for the simulated probe's gate. */
export function withSimulatedProbeGate(deployment: KubeObject): KubeObject {
  const copy = JSON.parse(JSON.stringify(deployment)) as any;
  copy.spec.template.spec.readinessGates = [...(copy.spec.template.spec.readinessGates ?? []), { conditionType: SIMULATED_PROBE_GATE }];
  return copy;
}

/** The probes running; `stop()` ends them, `transitions` lists every condition written (`<pod> <revision> True|False`). */
export interface SimulatedRouterProbes {
  readonly transitions: readonly string[];
  /** Throws what a probe round failed with (other than a conflict, retried next round). */
  check(): void;
  stop(): Promise<void>;
}

/**
 * Probes the router Pods matching `labels` in `namespace`: a Pod of release R is ready when
 * `GET <urlOf(R)><path>` answers 200, `path` read from the Pod's container's readinessProbe.
 */
export function startSimulatedRouterProbes(client: KubeClient, namespace: string, labels: Record<string, string>, urlOf: (revision: string) => string | undefined): SimulatedRouterProbes {
  const transitions: string[] = [];
  let failure: Error | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let round: Promise<void> = Promise.resolve();

  const probe = async (pod: KubeObject): Promise<boolean> => {
    const revision = pod.metadata.labels?.[ROUTER_REVISION_LABEL];
    const path = (pod.spec as any)?.containers?.[0]?.readinessProbe?.httpGet?.path;
    const url = revision === undefined ? undefined : urlOf(revision);
    if (url === undefined || typeof path !== 'string') return false;
    const r = await httpGet(`${url}${path}`).catch(() => undefined);
    return r?.status === 200;
  };

  const once = async () => {
    const pods = await client.listAll(POD, { namespace, labelSelector: labels });
    for (const pod of pods.items) {
      const status = (pod.status ?? {}) as { phase?: string; conditions?: { type: string; status: string }[] };
      if (pod.metadata.deletionTimestamp || status.phase !== 'Running') continue;
      if (!((pod.spec as any)?.readinessGates ?? []).some((g: any) => g.conditionType === SIMULATED_PROBE_GATE)) continue;
      const ready = (await probe(pod)) ? 'True' : 'False';
      const conditions = status.conditions ?? [];
      if (conditions.find((c) => c.type === SIMULATED_PROBE_GATE)?.status === ready) continue;
      const now = new Date().toISOString();
      const set = (type: string) => ({ type, status: ready, lastTransitionTime: now });
      // A failing probe takes Ready away at once; a passing one leaves Ready to kwok's
      // `pod-gates-ready`, which sets it once every gate is True, as the kubelet does.
      const next = [...conditions.filter((c) => c.type !== SIMULATED_PROBE_GATE && (ready === 'True' || c.type !== 'Ready')), set(SIMULATED_PROBE_GATE), ...(ready === 'False' ? [set('Ready')] : [])];
      try {
        await client.updateStatus({ ...pod, status: { ...status, conditions: next } });
        transitions.push(`${pod.metadata.name} ${pod.metadata.labels?.[ROUTER_REVISION_LABEL]} ${ready}`);
      } catch (err) {
        // A conflict (kwok or a controller wrote the Pod since the list) is retried next round; a
        // Pod deleted since the list needs no probe.
        const code = (err as { statusCode?: number }).statusCode;
        if (code !== 409 && code !== 404) throw err;
      }
    }
  };

  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      round = once()
        .catch((err: Error) => {
          failure ??= err;
        })
        .finally(schedule);
    }, PERIOD_MS);
  };
  schedule();

  return {
    transitions,
    check: () => {
      if (failure) throw failure;
    },
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      await round;
    },
  };
}
