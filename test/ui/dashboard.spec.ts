/**
 * The dashboard in Debian's Chromium (playwright-core) against the real rayshift API server and the
 * in-process operator, which executes real incremental upgrades on the test cluster (real
 * kube-apiserver, KubeRay, scheduler and controller manager; test/apiserver/support/api-env.ts) with the
 * TEST-ONLY Gateway status writer and Serve fleet (no Gateway data plane or Ray runs here). Checked: the list and rollout
 * pages; the chart's last point against the HTTPRoute's weights; the countdown reaching zero
 * against the time each interval-bound traffic step reached the route; Pause holding the operator
 * and Resume letting it continue (with the Pause answer arriving after the watch's newer status); a viewer without steering rights seeing disabled buttons and
 * refused calls; recovery after the API server restarts; a failed analysis gate (against a TEST-ONLY
 * stub Prometheus) in the analysis panel, on the chart, among the Kubernetes events and in the
 * analysis verbs, and the clusters' Serve replicas as the operator reports them; a shrinkFirst
 * service's plan dip, as `rayshift plan` words it; the RoleBasedGroup page, with a routed
 * rule's route and router weights; screenshots that
 * are not blank; axe-core scans without serious or critical violations; the API server serving the
 * dashboard under `/ui/` itself.
 *
 * Timestamps compared here are taken on this machine by the test's own watches and by the page;
 * no assertion is about how long the test itself takes.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { Testing } from 'cdk8s';
import { RoleBasedGroup } from '../../lib/cdk8s/rolebasedgroup';
import { projectRoot } from '../../lib/crds/resolve';
import type { KubeObject } from '../../lib/runtime/kube/types';
import { STEERING_VERBS } from '../../lib/engine/steering';
import { RBG_V1ALPHA2_TYPE, STATUS_ANNOTATION } from '../../lib/spec/object-names';
import { TEAM_A, rayServiceBody } from '../apiserver/support/api-env';
import { RAYSHIFT_RAYSERVICE, engineState, operatorPassNow, recordRouteWeights, waitFor } from '../support/operator-env';
import { FAILING_VALUE, createServing, startGatedUpgrade } from './support/failed-gate';
import { startStubPrometheus } from './support/stub-prometheus';
import { checkAccessibility, checkScreenshot, tabTo } from './support/page-checks';
import { pageRecord, recordPage } from './support/page-recorder';
import { UiEnv, grantViewer, startUiEnv } from './support/ui-env';

const INTERVAL_SECONDS = 3;
const base = `/apis/rayshift/v1/namespaces/${TEAM_A}/rayservices`;
let env: UiEnv;
let alice: Page;
let cpu = 1;

beforeAll(async () => {
  env = await startUiEnv();
  await grantViewer(env.api, 'bob');
  expect((await env.api.rest('POST', base, rayServiceBody('llm', { interval: INTERVAL_SECONDS }))).status).toBe(200);
  await waitUntilUpgrade((u) => u.phase === 'UPGRADE_PHASE_IDLE' && !!u.active?.cluster, 'the first cluster to serve');
  alice = (await env.signedInPage(env.api.tokens.alice)).page;
}, 300_000);

afterAll(async () => {
  await env?.stop();
}, 120_000);

async function waitUntilUpgrade(check: (u: any) => boolean, what: string): Promise<any> {
  let last: any;
  try {
    await waitFor(async () => {
      const r = await env.api.rest('GET', `${base}/llm/upgrade`);
      last = r.body;
      return r.status === 200 && check(last);
    }, what, 120_000, 250);
  } catch (e) {
    throw new Error(`${(e as Error).message}; last status: ${JSON.stringify(last)}`);
  }
  return last;
}

/** Starts an upgrade of `llm` by changing the worker CPU request (part of the cluster spec hash). */
async function startUpgrade(): Promise<void> {
  cpu++;
  const body = rayServiceBody('llm', { cpu: String(cpu), interval: INTERVAL_SECONDS }) as any;
  // The operator writes the object often: a concurrent write is ABORTED (409), which a client retries.
  let r = await env.api.rest('PATCH', `${base}/llm?update_mask=spec.ray_cluster_config`, { spec: { rayClusterConfig: body.spec.rayClusterConfig } });
  for (let attempt = 1; r.status === 409 && attempt < 5; attempt++) {
    r = await env.api.rest('PATCH', `${base}/llm?update_mask=spec.ray_cluster_config`, { spec: { rayClusterConfig: body.spec.rayClusterConfig } });
  }
  expect(r.status).toBe(200);
}

/** Route weights by cluster (backend `<cluster>-serve-svc`), positive weights only. */
function byCluster(weights: { name: string; weight: number }[]): Record<string, number> {
  return Object.fromEntries(weights.filter((w) => w.weight > 0).map((w) => [w.name.replace(/-serve-svc$/, ''), w.weight]));
}

test('the sign-in page and the list page show the service with its phase', async () => {
  const signIn = await env.browser.newPage();
  await signIn.goto(env.dashboard.url);
  await signIn.getByLabel('API token').waitFor();
  await checkScreenshot(env.browser, signIn, 'sign-in');
  await checkAccessibility(signIn);
  await signIn.close();

  await alice.goto(`${env.dashboard.url}#/`);
  const row = alice.getByTestId('rayservice-list').getByRole('row', { name: /llm/ });
  await row.getByText('Idle').waitFor();
  await expect(row.getByRole('img', { name: /Split of llm: 100% active, 0% pending/ }).count()).resolves.toBe(1);
  await checkScreenshot(env.browser, alice, 'list');
  await checkAccessibility(alice);
}, 120_000);

test('the rollout page follows an upgrade live: the chart tracks the route, the countdown reaches zero at each timed step', async () => {
  await alice.getByRole('link', { name: 'llm' }).click();
  await alice.locator('[data-testid=watch-state][data-state=live]').waitFor();
  await recordPage(alice);
  const route = await recordRouteWeights(env.api.admin, TEAM_A, 'llm-httproute');
  try {
    await waitFor(() => route.history.length > 0, 'the route', 30_000);
    await startUpgrade();
    // Mid-upgrade: the projection is drawn and the page is screenshotted and scanned.
    await alice.locator('svg[data-pending-weight="50"]').waitFor({ timeout: 120_000 });
    await expect(alice.locator('path.projected').count()).resolves.toBeGreaterThan(0);
    await checkScreenshot(env.browser, alice, 'rollout');
    await checkAccessibility(alice);
    const done = await waitUntilUpgrade((u) => u.phase === 'UPGRADE_PHASE_IDLE' && !u.pending && u.observedGeneration === u.generation, 'the upgrade to complete');
    await alice.locator(`svg[data-active-cluster="${done.active.cluster}"][data-active-weight="100"]`).waitFor();
  } finally {
    route.stop();
  }
  const rec = await pageRecord(alice);
  // Distinct weight vectors (a backend dropped at weight 0 after the promotion changes nothing here).
  const routes = route.history
    .map((h) => ({ at: h.at, weights: byCluster(h.weights) }))
    .filter((r, i, all) => i === 0 || JSON.stringify(r.weights) !== JSON.stringify(all[i - 1].weights));
  expect(routes.length).toBeGreaterThanOrEqual(4);

  // Every point the chart showed is the route's weights at that time, or one update before or after.
  const same = (a: Record<string, number>, b: Record<string, number>) => JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort());
  const afterUpgradeStart = rec.chart.filter((c) => c.at >= routes[0].at);
  expect(afterUpgradeStart.length).toBeGreaterThanOrEqual(4);
  for (const c of afterUpgradeStart) {
    const j = routes.filter((r) => r.at <= c.at).length - 1;
    const near = [routes[j - 1], routes[j], routes[j + 1]].filter((r) => r !== undefined);
    expect({ chart: c, matches: near.some((r) => same(r.weights, c.weights)) }).toEqual({ chart: c, matches: true });
  }
  // Every weight vector the route carried appeared on the chart, and the last ones are equal.
  for (const r of routes) expect(rec.chart.some((c) => same(c.weights, r.weights))).toBe(true);
  expect(rec.chart[rec.chart.length - 1].weights).toEqual(routes[routes.length - 1].weights);

  // Steps timed by the interval (the previous weight change reached the route less than an interval
  // and a second before): the countdown shown before the step reached zero within a second of the
  // step reaching the route. (The countdown shows its due time minus the page's clock, so it reads
  // zero at that due time; the page and the route watch share this machine's clock.)
  const timed = routes.slice(1).filter((r, i) => i > 0 && r.at - routes[i].at < (INTERVAL_SECONDS + 1) * 1000);
  expect(timed.length).toBeGreaterThanOrEqual(1);
  const shown = Object.entries(rec.dues).map(([due, shownAt]) => ({ due: Number(due), shownAt }));
  for (const step of timed) {
    const before = shown.filter((d) => d.shownAt < step.at);
    const offBy = Math.min(...before.map((d) => Math.abs(d.due - step.at)));
    expect(offBy < 1_000 ? 'within a second' : `zero ${offBy} ms from the step at ${step.at}; countdowns ${JSON.stringify(shown)}; route ${JSON.stringify(routes)}`).toBe('within a second');
  }
}, 300_000);

test('Pause holds the next step and Resume lets the upgrade continue', async () => {
  const route = await recordRouteWeights(env.api.admin, TEAM_A, 'llm-httproute');
  try {
    await waitFor(() => route.history.length > 0, 'the route', 30_000);
    await startUpgrade();
    await alice.locator('svg[data-pending-weight="25"]').waitFor({ timeout: 120_000 });
    // The answer to Pause is held until the watch has shown the operator's Paused: the answer (the
    // object as the pause write left it, still Shifting) then arrives last, and must not take the
    // badge back, since no later event would correct it while the upgrade is held.
    const badge = alice.locator('.badge');
    await alice.route(/:pause$/, async (call) => {
      const answer = await call.fetch();
      await alice.locator('.badge', { hasText: 'Paused' }).waitFor({ timeout: 30_000 }).catch(() => undefined);
      await call.fulfill({ response: answer });
    });
    await alice.getByTestId('steer-pause').click();
    await alice.getByTestId('steer-outcome').getByText('Pause accepted.').waitFor();
    await alice.unroute(/:pause$/);
    await expect(badge.textContent()).resolves.toBe('Paused');
    await expect(alice.getByTestId('countdown').textContent()).resolves.toBe('none scheduled');
    const heldAt = route.history.length;
    const heldWeights = route.history[heldAt - 1].weights;
    // Once the next step is due, a pass of the operator (made to run now) must still hold it: the
    // engine state it writes keeps the pending weight and says Paused.
    let held: Record<string, any> = {};
    await waitFor(async () => {
      held = engineState(await env.api.admin.get(RAYSHIFT_RAYSERVICE, 'llm', TEAM_A));
      return held.trafficConfirmed === true && Date.now() > held.lastTrafficMigratedTime + INTERVAL_SECONDS * 1000;
    }, 'the next step to be due', 30_000, 100);
    const pass = await operatorPassNow(env.api.admin, TEAM_A, 'llm');
    expect({ phase: pass.phase, pendingWeight: pass.pendingWeight }).toEqual({ phase: 'Paused', pendingWeight: held.pendingWeight });
    expect(route.history.length).toBe(heldAt);
    expect((await waitUntilUpgrade(() => true, 'status')).phase).toBe('UPGRADE_PHASE_PAUSED');

    // By keyboard: Tab to Resume and press Enter.
    await tabTo(alice, 'steer-resume');
    await alice.keyboard.press('Enter');
    await alice.getByTestId('steer-outcome').getByText('Resume accepted.').waitFor();
    await waitFor(() => route.history.length > heldAt, 'a step after resuming', 60_000, 100);
    expect(route.history[heldAt].weights).not.toEqual(heldWeights);
    await waitUntilUpgrade((u) => u.phase === 'UPGRADE_PHASE_IDLE' && !u.pending, 'the upgrade to complete after resuming');
  } finally {
    route.stop();
  }
}, 300_000);

test('a viewer without steering rights sees the buttons disabled, and a direct call is refused', async () => {
  const { page } = await env.signedInPage(env.api.tokens.bob);
  await page.goto(`${env.dashboard.url}#/rayservices/${TEAM_A}/llm`);
  await page.locator('[data-testid=watch-state][data-state=live]').waitFor();
  await page.getByText('You may watch this rollout but not steer it.').waitFor();
  for (const verb of STEERING_VERBS) await expect(page.getByTestId(`steer-${verb}`).isDisabled()).resolves.toBe(true);
  // alice may pause (the service is idle, incremental and not paused): the difference is the right, not the state.
  await alice.reload();
  await alice.locator('[data-testid=watch-state][data-state=live]').waitFor();
  await waitFor(async () => alice.getByTestId('steer-pause').isEnabled(), 'alice’s Pause button to be enabled', 30_000, 200);

  const refused = await env.api.rest('POST', `${base}/llm:pause`, { reason: 'not mine' }, { token: env.api.tokens.bob });
  expect(refused.status).toBe(403);
  const status = await env.api.rest('GET', `${base}/llm/upgrade`);
  expect(status.body.paused).toBe(false);
  await page.context().close();
}, 120_000);

test('the page recovers after the API server restarts', async () => {
  await alice.locator('[data-testid=watch-state][data-state=live]').waitFor();
  await env.restartApiServer(async () => {
    await alice.locator('[data-testid=watch-state][data-state=reconnecting]').waitFor({ timeout: 60_000 });
  });
  await alice.locator('[data-testid=watch-state][data-state=live]').waitFor({ timeout: 60_000 });
  // The watch is live again and follows a new upgrade.
  await startUpgrade();
  await alice.locator('svg[data-pending-weight="25"]').waitFor({ timeout: 120_000 });
  await waitUntilUpgrade((u) => u.phase === 'UPGRADE_PHASE_IDLE' && !u.pending, 'the upgrade to complete');
  await alice.locator('svg[data-pending-weight="0"][data-active-weight="100"]').waitFor();
}, 300_000);

test('a failed analysis gate shows in the analysis panel, on the chart, among the events and in the analysis verbs', async () => {
  const prometheus = await startStubPrometheus(() => FAILING_VALUE);
  try {
    await createServing(env, 'gated');
    await alice.goto(`${env.dashboard.url}#/rayservices/${TEAM_A}/gated`);
    await alice.locator('[data-testid=watch-state][data-state=live]').waitFor();
    // The operator reports each cluster's Serve replicas; the page shows what the API serves.
    let active: { readyReplicas?: number; targetReplicas?: number } = {};
    await waitFor(async () => {
      active = ((await env.api.rest('GET', `${base}/gated/upgrade`)).body as { active?: typeof active }).active ?? {};
      return active.readyReplicas !== undefined && active.targetReplicas !== undefined && active.targetReplicas > 0;
    }, "the operator to report the serving cluster's Serve replicas", 60_000);
    await alice.getByTestId('replicas-active').getByText(`${active.readyReplicas}/${active.targetReplicas}`).waitFor();
    await startGatedUpgrade(env, 'gated', prometheus.url);

    const gate = alice.locator('[data-testid=run-step][data-phase=Failed]');
    await gate.waitFor({ timeout: 120_000 });
    await alice.locator('.badge', { hasText: 'Paused' }).waitFor();
    const errorRatio = gate.locator('tr[data-metric=error-ratio][data-phase=Failed]');
    await errorRatio.getByText('2 taken: 0 successful, 2 failed, 0 inconclusive').waitFor();
    await errorRatio.getByText(/0\.2 > maximum 0\.05/).waitFor();
    await alice.locator('[data-testid=verdicts] tr.failed[data-phase=Failed]').waitFor();
    await alice.locator('svg[data-testid=rollout-chart] g.verdict-failed').waitFor();
    // The operator's verdict Event, among the service's events.
    await alice.locator('[data-testid=event][data-reason=AnalysisFailed][data-type=Warning]').waitFor({ timeout: 30_000 });
    for (const verb of ['retry-analysis', 'skip-analysis']) await waitFor(() => alice.getByTestId(`steer-${verb}`).isEnabled(), `${verb} to be enabled`, 30_000, 200);
    await expect(alice.getByTestId('steer-retry-analysis').textContent()).resolves.toBe('Retry analysis');
    await checkScreenshot(env.browser, alice, 'rollout-failed-gate');
    await checkAccessibility(alice);
    // The verb reaches its REST method (`:retryAnalysis`) and the API server accepts it.
    await alice.getByTestId('steer-retry-analysis').click();
    await alice.getByTestId('steer-outcome').getByText('Retry analysis accepted.').waitFor();
  } finally {
    await env.api.rest('DELETE', `${base}/gated`);
    await prometheus.close();
  }
}, 300_000);

test('a capacityPolicy shrinkFirst service: the rollout page shows the plan\'s dip in the words of `rayshift plan`', async () => {
  try {
    await createServing(env, 'lean');
    await alice.goto(`${env.dashboard.url}#/rayservices/${TEAM_A}/lean`);
    await alice.locator('[data-testid=watch-state][data-state=live]').waitFor();
    // No upgrade in flight, no plan and no dip.
    await expect(alice.getByTestId('plan-dip').count()).resolves.toBe(0);
    // shrinkFirst and a new cluster spec in one write, with an interval long enough that the upgrade
    // waits after its first step, and below the progress deadline (600 s; at 600 s the plan is one
    // that rolls back). The plan (maxSurge 50, step 25, interval 300 s, no surge): at 0 s the old
    // cluster gives back 50 (50% served), the new takes 50, traffic 75/25 (75%); 50/50 at 300 s
    // (100%); the old cluster's last traffic leaves first, 25/75 at 600 s (25 + 50 = 75%) and 0/100
    // at 900 s (50%); at 1200 s the old cluster at 0, the new at 100. Below 100% twice,
    // 300 + 600 s = 15 min in all, lowest 50%.
    const spec = (rayServiceBody('lean', { cpu: '2', interval: 300 }) as { spec: { rayClusterConfig: unknown; upgradeStrategy: { clusterUpgradeOptions: unknown } } }).spec;
    await env.api.admin.patchMerge(RAYSHIFT_RAYSERVICE, 'lean', TEAM_A, {
      spec: { rayshift: { capacityPolicy: 'shrinkFirst' }, rayClusterConfig: spec.rayClusterConfig, upgradeStrategy: { clusterUpgradeOptions: spec.upgradeStrategy.clusterUpgradeOptions } },
    });
    const dip = alice.getByTestId('plan-dip');
    await dip.waitFor({ timeout: 120_000 });
    await expect(dip.textContent()).resolves.toBe('Plan: dip to 50% served 2 times, 15m00s in all (0s to 20m00s): capacityPolicy shrinkFirst, if the surge does not fit');
    await checkAccessibility(alice);
  } finally {
    await env.api.rest('DELETE', `${base}/lean`);
  }
}, 300_000);

test('the RoleBasedGroup page shows per-role updated and ready replicas and the skew against maxSkew', async () => {
  const chart = Testing.chart();
  new RoleBasedGroup(chart, 'g', {
    metadata: { name: 'pd', namespace: TEAM_A },
    version: 'v1alpha2',
    roles: [
      { name: 'prefill', replicas: 4, template: { spec: { containers: [{ name: 'prefill', image: 'vllm:2' }] } } },
      { name: 'decode', replicas: 2, template: { spec: { containers: [{ name: 'decode', image: 'vllm:2' }] } } },
    ],
    coordination: [{ name: 'pd', roles: ['prefill', 'decode'], rollingUpdate: { maxSkew: '10%', maxUnavailable: 1 } }],
  });
  for (const o of Testing.synth(chart) as KubeObject[]) await env.api.admin.create(o);
  const roleStatuses = [
    { name: 'prefill', replicas: 4, readyReplicas: 4, updatedReplicas: 3 },
    { name: 'decode', replicas: 2, readyReplicas: 1, updatedReplicas: 1 },
  ];
  await env.api.admin.patchMerge(RBG_V1ALPHA2_TYPE, 'pd', TEAM_A, { status: { roleStatuses } }, { subresource: 'status' });

  await alice.goto(`${env.dashboard.url}#/`);
  await alice.getByTestId('rbg-list').getByRole('link', { name: 'pd' }).click();
  const prefill = alice.locator('[data-testid=rbg-roles] tr[data-role=prefill]');
  await prefill.waitFor();
  await expect(prefill.getAttribute('data-updated')).resolves.toBe('3');
  await expect(alice.locator('[data-testid=rbg-roles] tr[data-role=decode]').getAttribute('data-ready')).resolves.toBe('1');
  const rule = alice.getByTestId('coordination-rule');
  await expect(rule.getAttribute('data-skew')).resolves.toBe('25');
  await expect(rule.getAttribute('data-max-skew')).resolves.toBe('10');
  await rule.getByText('over the bound').waitFor();
  await checkScreenshot(env.browser, alice, 'rolebasedgroup');
  await checkAccessibility(alice);
}, 120_000);

test('the RoleBasedGroup page shows the way back as the way forward: rollback rounds, the RolledBack condition and each role on either revision', async () => {
  const chart = Testing.chart();
  new RoleBasedGroup(chart, 'g', {
    metadata: { name: 'pd-back', namespace: TEAM_A },
    executor: 'operator',
    roles: [
      { name: 'prefill', replicas: 4, template: { spec: { containers: [{ name: 'prefill', image: 'vllm:2' }] } } },
      { name: 'decode', replicas: 2, template: { spec: { containers: [{ name: 'decode', image: 'vllm:2' }] } } },
    ],
    coordination: [{ name: 'pd', roles: ['prefill', 'decode'], rollingUpdate: { maxSkew: '1%', maxUnavailable: 1 } }],
  });
  const group = (Testing.synth(chart) as KubeObject[]).find((o) => o.kind === 'RoleBasedGroup')!;
  // The status rayshift's executor writes at its second rollback round (no executor runs here).
  const status = {
    name: 'pd', phase: 'RollingBack', reason: 'RollbackRequested', message: 'rollback requested by alice; rollback round 2: prefill partition 3→4 (1/4 on the abandoned revision)',
    revision: 'fedcba9876543210', rounds: 1, skewPercent: 25, maxSkewPercent: 1, startedAt: '2026-11-29T06:00:00.000Z', lastProgressAt: '2026-11-29T06:00:00.000Z', progressMark: 9,
    rollback: { cause: 'rollback requested by alice', rounds: 2, startedAt: '2026-11-29T06:01:00.000Z' },
    conditions: [{ type: 'RolledBack', status: 'False', reason: 'RollbackRound', message: 'rollback round 2: prefill partition 3→4 (1/4 on the abandoned revision)', lastTransitionTime: '2026-11-29T06:01:05.000Z' }],
    roles: [
      { name: 'prefill', desired: 4, updated: 1, ready: 4, partition: 4, skewPercent: 25, phase: 'RollingBack', reason: '', replicasByRevision: { abandoned: 1, previous: 3 } },
      { name: 'decode', desired: 2, updated: 0, ready: 2, partition: 2, skewPercent: 0, phase: 'RollingBack', reason: '', replicasByRevision: { abandoned: 0, previous: 2 } },
    ],
  };
  await env.api.admin.create({ ...group, metadata: { ...group.metadata, annotations: { ...group.metadata.annotations, [STATUS_ANNOTATION]: JSON.stringify({ observedGeneration: 1, coordinations: [status] }) } } });

  await alice.goto(`${env.dashboard.url}#/`);
  await alice.getByTestId('rbg-list').getByRole('link', { name: 'pd-back' }).click();
  const rollout = alice.getByTestId('rbg-rollout');
  await rollout.waitFor();
  await expect(rollout.getAttribute('data-phase')).resolves.toBe('RollingBack');
  await expect(rollout.getAttribute('data-rollback-rounds')).resolves.toBe('2');
  await alice.getByTestId('rbg-rollback-rounds').getByText('2 rollback round(s)').waitFor();
  await rollout.getByText('rollback requested by alice', { exact: false }).first().waitFor();
  await expect(alice.getByTestId('rbg-rolledback-condition').getAttribute('data-status')).resolves.toBe('False');
  const prefill = alice.locator('[data-testid=rbg-revisions] tr[data-role=prefill]');
  await expect(prefill.getAttribute('data-abandoned')).resolves.toBe('1');
  await expect(prefill.getAttribute('data-previous')).resolves.toBe('3');
  await expect(alice.locator('[data-testid=rbg-revisions] tr[data-role=decode]').getAttribute('data-abandoned')).resolves.toBe('0');
  await checkAccessibility(alice);
}, 120_000);

/** A rule's status as rayshift's executor writes it for `routedGroupWithStatus`: its phase, how many of each role's 2 replicas are updated, and its router route. */
interface RoutedRuleStatus {
  readonly phase: string;
  readonly updated: number;
  readonly router: object;
}

/**
 * Creates group `name` as the construct renders it, with two routed rules (pd: prefill and decode;
 * pd2: p2 and d2, 2 replicas each) and the status rayshift's executor would have written for them
 * (no executor runs here).
 */
async function routedGroupWithStatus(name: string, pd: RoutedRuleStatus, pd2: RoutedRuleStatus): Promise<void> {
  const chart = Testing.chart();
  const sglang = (role: string) => ({ spec: { containers: [{ name: role, image: 'sglang:2' }] } });
  const router = { kind: 'sglang' as const, image: 'lmsysorg/sglang:v0.5.5', gateway: { name: 'inference' } };
  new RoleBasedGroup(chart, 'g', {
    metadata: { name, namespace: TEAM_A },
    executor: 'operator',
    roles: ['prefill', 'decode', 'p2', 'd2'].map((role) => ({ name: role, replicas: 2, template: sglang(role) })),
    coordination: [
      { name: 'pd', roles: ['prefill', 'decode'], rollingUpdate: { maxSkew: '50%' }, router },
      { name: 'pd2', roles: ['p2', 'd2'], rollingUpdate: { maxSkew: '50%' }, router: { ...router, prefill: 'p2', decode: 'd2' } },
    ],
  });
  const group = (Testing.synth(chart) as KubeObject[]).find((o) => o.kind === 'RoleBasedGroup')!;
  const role = (role: string, updated: number) => ({ name: role, desired: 2, updated, ready: 2, partition: 2 - updated, skewPercent: 0, phase: 'Progressing', reason: '' });
  const coordination = (rule: string, roles: string[], s: RoutedRuleStatus) => ({
    name: rule, phase: s.phase, reason: 'RoundWritten', message: `round ${s.updated} written`, revision: '0123456789abcdef', rounds: s.updated, skewPercent: 0, maxSkewPercent: 50,
    startedAt: '2026-11-29T06:00:00.000Z', lastProgressAt: '2026-11-29T06:00:00.000Z', progressMark: 3, roles: roles.map((r) => role(r, s.updated)), router: s.router,
  });
  const doc = { observedGeneration: 1, coordinations: [coordination('pd', ['prefill', 'decode'], pd), coordination('pd2', ['p2', 'd2'], pd2)] };
  await env.api.admin.create({ ...group, metadata: { ...group.metadata, annotations: { ...group.metadata.annotations, [STATUS_ANNOTATION]: JSON.stringify(doc) } } });
}

test('the RoleBasedGroup page shows a routed rule\'s route and each release\'s router weight, and why none was written', async () => {
  // Mid-rollout: one rule's route split 75 / 25 after its routers' releases, the other's route not found.
  const split = { route: 'pd-routed-pd-router', removeOld: false, releases: [
    { revision: '1a2b3c4d5e', service: 'pd-routed-pd-router-1a2b3c4d5e', weight: 75, current: false },
    { revision: '6f7a8b9c0d', service: 'pd-routed-pd-router-6f7a8b9c0d', weight: 25, current: true },
  ] };
  const missing = { route: 'pd-routed-pd2-router', removeOld: false, releases: [], problem: 'route pd-routed-pd2-router not found' };
  await routedGroupWithStatus('pd-routed', { phase: 'Progressing', updated: 1, router: split }, { phase: 'Progressing', updated: 1, router: missing });

  await alice.goto(`${env.dashboard.url}#/`);
  await alice.getByTestId('rbg-list').getByRole('link', { name: 'pd-routed' }).click();
  const routers = alice.getByTestId('rbg-router');
  await routers.first().waitFor();
  await expect(routers.evaluateAll((els) => els.map((e) => e.getAttribute('data-route')))).resolves.toEqual(['pd-routed-pd-router', 'pd-routed-pd2-router']);
  const rows = alice.locator('[data-testid=rbg-router][data-route=pd-routed-pd-router] [data-testid=rbg-router-releases] tr[data-revision]');
  await expect(rows.evaluateAll((els) => els.map((e) => [e.getAttribute('data-revision'), e.getAttribute('data-weight'), e.getAttribute('data-current')]))).resolves.toEqual([
    ['1a2b3c4d5e', '75', 'false'],
    ['6f7a8b9c0d', '25', 'true'],
  ]);
  await rows.nth(0).getByText('pd-routed-pd-router-1a2b3c4d5e').waitFor();
  await expect(alice.getByRole('meter', { name: 'pd: weight of release 6f7a8b9c0d on the route' }).getAttribute('aria-valuenow')).resolves.toBe('25');
  const second = alice.locator('[data-testid=rbg-router][data-route=pd-routed-pd2-router]');
  await second.getByTestId('rbg-router-problem').getByText('route pd-routed-pd2-router not found', { exact: false }).waitFor();
  await expect(second.locator('[data-testid=rbg-router-releases]').count()).resolves.toBe(0);
  await checkScreenshot(env.browser, alice, 'rolebasedgroup-router');
  await checkAccessibility(alice);
}, 120_000);

test('the RoleBasedGroup page shows the old router scaled to 0 after a routed rollout, and a route held until a scaled-back router is ready', async () => {
  // Rule pd's rollout complete and its old router scaled to 0; rule pd2 rolling back to a release
  // whose router was scaled back and is not ready yet, so the route as read is kept.
  const releases = (route: string) => [
    { revision: '1a2b3c4d5e', service: `${route}-1a2b3c4d5e`, weight: 0, current: false },
    { revision: '6f7a8b9c0d', service: `${route}-6f7a8b9c0d`, weight: 100, current: true },
  ];
  const done = { route: 'pd-after-pd-router', removeOld: true, releases: releases('pd-after-pd-router'), scaledDown: [{ deployment: 'pd-after-pd-router-1a2b3c4d5e', replicas: 2 }] };
  const held = { route: 'pd-after-pd2-router', removeOld: false, releases: releases('pd-after-pd2-router'), waitingForRouter: ['pd-after-pd2-router-1a2b3c4d5e'] };
  await routedGroupWithStatus('pd-after', { phase: 'Complete', updated: 2, router: done }, { phase: 'RollingBack', updated: 2, router: held });

  await alice.goto(`${env.dashboard.url}#/`);
  await alice.getByTestId('rbg-list').getByRole('link', { name: 'pd-after' }).click();
  const first = alice.locator('[data-testid=rbg-router][data-route=pd-after-pd-router]');
  const scaled = first.getByTestId('rbg-router-scaled-down');
  await scaled.getByText('pd-after-pd-router-1a2b3c4d5e (was 2)').waitFor();
  await expect(scaled.locator('[data-deployment]').evaluateAll((els) => els.map((e) => [e.getAttribute('data-deployment'), e.getAttribute('data-replicas')]))).resolves.toEqual([['pd-after-pd-router-1a2b3c4d5e', '2']]);
  await expect(first.getByTestId('rbg-router-waiting').count()).resolves.toBe(0);
  const second = alice.locator('[data-testid=rbg-router][data-route=pd-after-pd2-router]');
  await second.getByTestId('rbg-router-waiting').getByText('pd-after-pd2-router-1a2b3c4d5e', { exact: false }).waitFor();
  await expect(second.getByTestId('rbg-router-scaled-down').count()).resolves.toBe(0);
  await checkAccessibility(alice);
}, 120_000);

test('the API server serves the dashboard under /ui/ itself, and the page works against it directly', async () => {
  const index = await env.api.rest('GET', '/ui/');
  expect(index.status).toBe(200);
  expect(index.text).toBe(fs.readFileSync(path.join(projectRoot(), 'dist-ui', 'index.html'), 'utf8'));
  expect(index.headers['content-security-policy']).toContain("default-src 'self'");
  const redirect = await env.api.rest('GET', '/ui');
  expect({ status: redirect.status, location: redirect.headers.location }).toEqual({ status: 302, location: '/ui/' });

  // The kube-apiserver's serving certificate (the test CA's), which the browser does not know.
  const context = await env.browser.newContext({ ignoreHTTPSErrors: true });
  try {
    const page = await context.newPage();
    page.setDefaultTimeout(60_000);
    await page.goto(`${env.apiServer().url}/ui/`);
    await page.getByLabel('API token').fill(env.api.tokens.alice);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByTestId('username').textContent()).resolves.toContain('alice');
    await page.getByTestId('rayservice-list').getByRole('row', { name: /llm/ }).waitFor();
  } finally {
    await context.close();
  }
}, 120_000);
