/** The RoleBasedGroup view of `rayshift status rbg/NAME`, read from the executor's status annotation. */
import { groupView, renderGroupLines, renderGroupScreen, rolloutFinished } from '../../lib/cli/rbg-status-view';
import { Style } from '../../lib/cli/style';
import type { CoordinationStatus } from '../../lib/engine/rbg-coordination-status';
import type { RolloutStatusDocument } from '../../lib/runtime/rbg/status';

const plain: Style = { red: (s) => s, yellow: (s) => s, green: (s) => s, dim: (s) => s, bold: (s) => s };
const T = Date.parse('2026-11-21T12:00:00.000Z');

function coordination(over: Partial<CoordinationStatus> = {}): CoordinationStatus {
  return {
    name: 'pd', phase: 'Progressing', reason: 'WaitingForRoles', message: 'decode has 3 unavailable replicas, more than maxUnavailable 2',
    revision: 'abc', rounds: 3, skewPercent: 7.5, maxSkewPercent: 10, startedAt: '2026-11-21T11:59:00.000Z', lastProgressAt: '2026-11-21T11:59:50.000Z',
    deadlineAt: '2026-11-21T12:00:30.000Z', progressMark: 30,
    roles: [
      { name: 'prefill', desired: 40, updated: 12, ready: 40, partition: 28, skewPercent: 0, phase: 'Updating', reason: '' },
      { name: 'decode', desired: 20, updated: 3, ready: 17, partition: 17, skewPercent: 0, phase: 'Unavailable', reason: '' },
    ],
    ...over,
  };
}

function group(doc: RolloutStatusDocument | undefined, generation = 4) {
  return { metadata: { namespace: 'pd', name: 'pd-inference', generation, ...(doc ? { annotations: { 'rayshift.dev/rollout-status': JSON.stringify(doc) } } : {}) } };
}

test('the screen shows each role with updated and ready bars, the blocking role and the deadline countdown', () => {
  const v = groupView(group({ observedGeneration: 4, coordinations: [coordination({ blockingRole: 'decode' })] }));
  const screen = renderGroupScreen(v, T, plain, 10).join('\n');
  expect(screen).toContain('RoleBasedGroup pd/pd-inference');
  expect(screen).toContain('pd  Progressing (WaitingForRoles)  round 3  skew 7.5% of max 10%');
  expect(screen).toMatch(/prefill\s+updated ███░░░░░░░\s+12\/40\s+ready █████\s+40\s+partition 28\s+Updating/);
  expect(screen).toMatch(/decode\s+updated ██░░░░░░░░\s+3\/20/);
  expect(screen).toContain('blocked by decode: decode has 3 unavailable replicas');
  expect(screen).toContain('progress deadline in 30s');
});

test('a group without status, or with an unreadable coordination, says so', () => {
  expect(renderGroupScreen(groupView(group(undefined)), T, plain).join('\n')).toContain('no rollout status yet');
  expect(renderGroupLines(groupView(group({ observedGeneration: 4, invalid: 'bad JSON', coordinations: [] })), T)).toEqual(['12:00:00.000 pd/pd-inference invalid: bad JSON']);
});

test('one line per coordination for logs', () => {
  const lines = renderGroupLines(groupView(group({ observedGeneration: 4, coordinations: [coordination(), coordination({ name: 'other', phase: 'Complete' })] })), T);
  expect(lines).toEqual([
    '12:00:00.000 pd/pd-inference pd Progressing (round 3): prefill 12/40, decode 3/20 updated; skew 7.5% ≤ 10%',
    '12:00:00.000 pd/pd-inference other Complete (round 3): prefill 12/40, decode 3/20 updated; skew 7.5% ≤ 10%',
  ]);
});

test('finished only when every coordination of the current generation stopped progressing; failed unless all completed', () => {
  const complete = coordination({ phase: 'Complete' });
  expect(rolloutFinished(groupView(group({ observedGeneration: 4, coordinations: [complete] })))).toEqual({ done: true, failed: false });
  expect(rolloutFinished(groupView(group({ observedGeneration: 4, coordinations: [complete, coordination({ phase: 'Failed' })] })))).toEqual({ done: true, failed: true });
  expect(rolloutFinished(groupView(group({ observedGeneration: 3, coordinations: [complete] })))).toEqual({ done: false, failed: false });
  expect(rolloutFinished(groupView(group({ observedGeneration: 4, coordinations: [coordination()] })))).toEqual({ done: false, failed: false });
});

test('a rollout held by its warmup shows where the warmup stands, in nodes, on the screen and in the log lines', () => {
  const warmup = {
    name: 'pd-inference-warmup-1a2b3c4d', revision: '1a2b3c4d', phase: 'Warming' as const, reason: 'WarmingImages', message: 'warming images: 3/8 nodes',
    desired: 8, succeeded: 3, failed: 0, active: 5, startedAt: '2026-11-21T11:59:00.000Z', deadlineAt: '2026-11-21T12:14:00.000Z',
  };
  const doc = { observedGeneration: 4, coordinations: [coordination({ reason: 'WarmingImages', message: warmup.message })], warmup };
  const screen = renderGroupScreen(groupView(group(doc)), T, plain).join('\n');
  expect(screen).toContain('warmup pd-inference-warmup-1a2b3c4d  Warming (WarmingImages)  warming images: 3/8 nodes  timeout in 840s');
  expect(renderGroupLines(groupView(group(doc)), T)[0]).toBe('12:00:00.000 pd/pd-inference warmup pd-inference-warmup-1a2b3c4d Warming: warming images: 3/8 nodes');
  // Once the rollout runs, the log lines are the coordinations' again.
  const running = { ...doc, coordinations: [coordination()], warmup: { ...warmup, phase: 'Complete' as const, reason: 'WarmupComplete', message: 'images warm on 8/8 nodes' } };
  expect(renderGroupLines(groupView(group(running)), T)).toHaveLength(1);
});

test("each coordination shows its analysis as a RayService's: the gate measuring, the newest verdict, and both in its log line", () => {
  const metric = { name: 'error-ratio', phase: 'Running' as const, taken: 1, successes: 1, failures: 0, inconclusives: 0, consecutiveSuccesses: 1, last: { at: T - 5_000, result: 'Successful' as const, value: 0.01, message: '0.01' } };
  const analysis = {
    newReplicas: 6,
    step: { id: 'step/abc/50/1', kind: 'step' as const, cluster: 'abc', pendingWeight: 50, startedAt: T - 20_000, phase: 'Running' as const, metrics: [metric] },
    verdicts: [{ id: 'step/abc/25/0', kind: 'step' as const, pendingWeight: 25, phase: 'Successful' as const, at: T - 12_000, dryRun: false, message: 'error-ratio successful (0 failed, 0 inconclusive of 2; last: 0.01)' }],
  };
  const doc = { observedGeneration: 4, coordinations: [coordination({ reason: 'WaitingForAnalysis', analysis })] };
  const screen = renderGroupScreen(groupView(group(doc)), T, plain);
  expect(screen).toEqual(expect.arrayContaining([
    '    analysis step gate at 50%: measuring',
    '      error-ratio      1 taken, 0 failed, 0 inconclusive; last successful: 0.01',
    '    last verdict: step gate at 25% Successful 12s ago: error-ratio successful (0 failed, 0 inconclusive of 2; last: 0.01)',
  ]));
  expect(renderGroupLines(groupView(group(doc)), T)[0]).toMatch(/^12:00:00.000 pd\/pd-inference pd Progressing \(round 3\): .* analysis=step@50:1 verdict=step@25:Successful$/);
});

test('the way back shows as the way forward: the rollback round, each role on the previous and the abandoned revision, not finished until RolledBack', () => {
  const back = coordination({
    phase: 'RollingBack', reason: 'AnalysisFailed', message: 'the analysis of run step@33:1 failed; rollback round 2: prefill partition 30→34 (10/40 on the abandoned revision)',
    rollback: { cause: 'the analysis of run step@33:1 failed', rounds: 2, startedAt: '2026-11-21T11:59:55.000Z' },
    roles: [
      { name: 'prefill', desired: 40, updated: 10, ready: 39, partition: 34, skewPercent: 0, phase: 'RollingBack', reason: '', replicasByRevision: { abandoned: 10, previous: 30 } },
      { name: 'decode', desired: 20, updated: 4, ready: 20, partition: 16, skewPercent: 0, phase: 'RollingBack', reason: '', replicasByRevision: { abandoned: 4, previous: 16 } },
    ],
  });
  const v = groupView(group({ observedGeneration: 4, coordinations: [back] }));
  const screen = renderGroupScreen(v, T, plain, 10).join('\n');
  expect(screen).toContain('pd  RollingBack (AnalysisFailed)  round 3  rollback round 2');
  expect(screen).toMatch(/prefill\s+previous revision ████████░░\s+30\/40\s+abandoned\s+10\s+ready\s+39\s+partition 34\s+RollingBack/);
  expect(renderGroupLines(v, T)).toEqual(['12:00:00.000 pd/pd-inference pd RollingBack (round 3, rollback round 2): prefill 10/40, decode 4/20 on the abandoned revision; skew 7.5% ≤ 10%']);
  expect(rolloutFinished(v)).toEqual({ done: false, failed: false });
  expect(rolloutFinished(groupView(group({ observedGeneration: 4, coordinations: [{ ...back, phase: 'RolledBack' }] })))).toEqual({ done: true, failed: true });
});

test('the screen and the log line show the router route\'s weight per release, or why none is written', () => {
  const router = { route: 'pd-pd-router', removeOld: false, releases: [{ revision: '1a2b3c4d5e', service: 'pd-pd-router-1a2b3c4d5e', weight: 75, current: false }, { revision: '6f7a8b9c0d', service: 'pd-pd-router-6f7a8b9c0d', weight: 25, current: true }] };
  const v = groupView(group({ observedGeneration: 4, coordinations: [coordination({ router })] }));
  expect(renderGroupScreen(v, T, plain).join('\n')).toContain('    route pd-pd-router: old 1a2b3c4d5e 75%, new 6f7a8b9c0d 25%');
  expect(renderGroupLines(v, T)[0]).toMatch(/updated; skew 7\.5% ≤ 10%; route pd-pd-router: old 1a2b3c4d5e 75%, new 6f7a8b9c0d 25%$/);
  const done = groupView(group({ observedGeneration: 4, coordinations: [coordination({ router: { ...router, removeOld: true, releases: [{ ...router.releases[0], weight: 0 }, { ...router.releases[1], weight: 100 }] } })] }));
  expect(renderGroupScreen(done, T, plain).join('\n')).toContain('route pd-pd-router: old 1a2b3c4d5e 0%, new 6f7a8b9c0d 100% (old router may go)');
  const missing = groupView(group({ observedGeneration: 4, coordinations: [coordination({ router: { route: 'pd-pd-router', releases: [], removeOld: false, problem: 'route pd-pd-router not found: render the rule\'s routers' } })] }));
  expect(renderGroupScreen(missing, T, plain).join('\n')).toContain('route pd-pd-router: no weights written: route pd-pd-router not found');
});

test('the screen shows the scheduler watch\'s record with the scheduler\'s message', () => {
  const surgeUnschedulable = { pods: 1, roles: ['decode'], since: '2026-11-21T11:59:55.000Z', message: '0/2 nodes are available: 2 Insufficient nvidia.com/gpu.', boundExceeded: false };
  const screen = renderGroupScreen(groupView(group({ observedGeneration: 4, coordinations: [coordination({ surgeUnschedulable })] })), T, plain).join('\n');
  expect(screen).toContain('    1 Pod of decode Unschedulable since 2026-11-21T11:59:55.000Z: 0/2 nodes are available: 2 Insufficient nvidia.com/gpu.');
});

test('the screen shows the first round\'s capacity preflight when it did not fit (red once the rollout was refused)', () => {
  const capacity = { outcome: 'doesNotFit' as const, message: 'decode: needs 4 nvidia.com/gpu on nodes matching {}, 1 free', at: '2026-11-21T11:59:00.000Z' };
  const line = '    first round did not fit (2026-11-21T11:59:00.000Z): decode: needs 4 nvidia.com/gpu on nodes matching {}, 1 free';
  expect(renderGroupScreen(groupView(group({ observedGeneration: 4, coordinations: [coordination({ capacity })] })), T, plain)).toContain(line);
  const refused = groupView(group({ observedGeneration: 4, coordinations: [coordination({ phase: 'Failed', reason: 'InsufficientCapacity', capacity })] }));
  expect(renderGroupScreen(refused, T, plain)).toContain(line);
  expect(rolloutFinished(refused)).toEqual({ done: true, failed: true });
});

test('the screen names the operator replica working on the group, and its shard', () => {
  const v = groupView(group({ observedGeneration: 4, coordinations: [coordination()], owner: { replica: 'rayshift-operator-1', shard: 6 } }));
  expect(renderGroupScreen(v, T, plain, 10)[0]).toBe('RoleBasedGroup pd/pd-inference  (replica rayshift-operator-1, shard 6)');
  expect(renderGroupScreen(groupView(group({ observedGeneration: 4, coordinations: [coordination()] })), T, plain, 10)[0]).toBe('RoleBasedGroup pd/pd-inference');
});
