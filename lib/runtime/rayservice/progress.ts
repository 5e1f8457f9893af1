/**
 * Where a `rayshift.dev` RayService's upgrade stands, as pure functions of the object as the
 * Kubernetes API returns it: the fields progress views read (`rayshift status`, the API server's
 * upgrade status, the dashboard through it) and when the next traffic step is due.
 */
import type { RayServiceStatus } from '../../engine/status';
import { asArray, asObject } from '../../spec/read';

/** The parts of a RayService object the progress views read. */
export interface ServiceView {
  readonly namespace: string;
  readonly name: string;
  readonly generation?: number;
  readonly observedGeneration?: number;
  readonly engine?: RayServiceStatus;
  readonly message?: string;
  readonly intervalSeconds?: number;
  readonly conditions: ReadonlyArray<{ type: string; status: string; reason?: string }>;
}

/** Reads the view's fields from a RayService object as the API returns it. */
export function serviceView(obj: { metadata: { namespace?: string; name?: string; generation?: number }; spec?: unknown; status?: unknown }): ServiceView {
  const status = asObject(obj.status);
  const options = asObject(asObject(asObject(obj.spec).upgradeStrategy).clusterUpgradeOptions);
  return {
    namespace: String(obj.metadata.namespace ?? ''),
    name: String(obj.metadata.name ?? ''),
    generation: obj.metadata.generation,
    observedGeneration: typeof status.observedGeneration === 'number' ? status.observedGeneration : undefined,
    engine: status.engineState as RayServiceStatus | undefined,
    message: typeof status.message === 'string' ? status.message : undefined,
    intervalSeconds: typeof options.intervalSeconds === 'number' ? options.intervalSeconds : undefined,
    conditions: asArray(status.conditions).map(asObject).map((c) => ({ type: String(c.type), status: String(c.status), ...(typeof c.reason === 'string' ? { reason: c.reason } : {}) })),
  };
}

/**
 * When the next traffic step is due (epoch ms), if one is waiting for the clock: the interval after
 * the last weight change once the route carries it, or (while the route is being confirmed) after
 * the decision, which precedes the confirmation by milliseconds.
 */
export function nextTrafficStepAt(v: ServiceView): number | undefined {
  const e = v.engine;
  if (!e || e.pendingClusterName === undefined || v.intervalSeconds === undefined || e.phase !== 'Upgrading') return undefined;
  const from = e.trafficConfirmed ? e.lastTrafficMigratedTime : e.lastProgressTime;
  return from === undefined ? undefined : from + v.intervalSeconds * 1000;
}
