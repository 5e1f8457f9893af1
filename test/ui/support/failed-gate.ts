/**
 * The failed-gate scenario of the dashboard's browser test and figure: a rayshift RayService whose
 * upgrade has a metric analysis against the TEST-ONLY stub Prometheus, with `onFailure: pause`, so a
 * gate the stub fails holds the upgrade (`Paused`, `AnalysisFailed`) and the operator records the
 * verdict in the status and as an Event.
 */
import { TEAM_A, rayServiceBody } from '../../apiserver/support/api-env';
import { RAYSHIFT_RAYSERVICE, waitFor } from '../../support/operator-env';
import type { UiEnv } from './ui-env';

/** What the stub answers: `error-ratio` passes at this value, and `p99-latency` (ms) too. */
export const PASSING_VALUE = 0.01;
/** What the stub answers to fail `error-ratio` (bound: maximum 0.05). */
export const FAILING_VALUE = 0.2;

/** `spec.rayshift.analysis` of the scenario: two failed `error-ratio` measurements (of three) fail the gate and pause the upgrade. */
export function gatedAnalysis(prometheusUrl: string): Record<string, unknown> {
  return {
    prometheusUrl,
    metrics: [
      { name: 'error-ratio', query: 'sum(rate(errors{cluster="{{cluster}}"}[{{window}}]))', successCondition: { maximum: 0.05 }, intervalSeconds: 1, count: 3, failureLimit: 1 },
      { name: 'p99-latency', query: 'max(latency_ms{cluster="{{cluster}}"})', successCondition: { maximum: 500 }, intervalSeconds: 1, count: 3 },
    ],
    onFailure: 'pause',
  };
}

const base = `/apis/rayshift/v1/namespaces/${TEAM_A}/rayservices`;

/** Creates `name` in TEAM_A over the REST API and waits until its first cluster serves. */
export async function createServing(env: UiEnv, name: string): Promise<void> {
  const created = await env.api.rest('POST', base, rayServiceBody(name, { interval: 1 }));
  if (created.status !== 200) throw new Error(`creating ${name}: HTTP ${created.status} ${JSON.stringify(created.body)}`);
  await waitFor(async () => {
    const u = (await env.api.rest('GET', `${base}/${name}/upgrade`)).body;
    return u?.phase === 'UPGRADE_PHASE_IDLE' && !!u.active?.cluster;
  }, `${name} to serve`, 120_000, 250);
}

/** Gives `name` the analysis and a new cluster spec in one write, so the upgrade it starts is gated from its first step. */
export async function startGatedUpgrade(env: UiEnv, name: string, prometheusUrl: string): Promise<void> {
  const spec = (rayServiceBody(name, { cpu: '2', interval: 1 }) as { spec: { rayClusterConfig: unknown } }).spec;
  await env.api.admin.patchMerge(RAYSHIFT_RAYSERVICE, name, TEAM_A, { spec: { rayshift: { analysis: gatedAnalysis(prometheusUrl) }, rayClusterConfig: spec.rayClusterConfig } });
}
