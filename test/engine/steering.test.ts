/**
 * The steering rules (lib/engine/steering.ts) as a table: each verb in each phase and strategy
 * either applies or is refused naming the phase, and each verb's patch; plus the state read from a
 * RayService object as the operator leaves it.
 */
import {
  ABORT_ANNOTATION,
  ANALYSIS_OVERRIDE_ANNOTATION,
  LAST_STEERING_ANNOTATION,
  PAUSE_ANNOTATION,
  PROMOTE_ANNOTATION,
  STEERING_VERBS,
  lastSteeringOf,
  spentSteeringAnnotations,
  steeringPatch,
  steeringRefusal,
  steeringStateOf,
  type SteeringState,
  type SteeringVerb,
} from '../../lib/engine/steering';
import type { UpgradeStrategyType } from '../../lib/spec/rayservice';

type Situation = 'steady' | 'upgrading' | 'paused upgrade' | 'paused steady' | 'rolling back' | 'promote requested' | 'analysis hold';

function state(situation: Situation, strategy: UpgradeStrategyType): SteeringState {
  const base = { strategy, upgrading: false, rollingBack: false, paused: false, pausedBySpec: false, promoteRequested: false };
  switch (situation) {
    case 'steady':
      return { ...base, phase: 'Running' };
    case 'upgrading':
      return { ...base, phase: 'Upgrading', upgrading: true };
    case 'paused upgrade':
      return { ...base, phase: 'Paused', upgrading: true, paused: true };
    case 'paused steady':
      return { ...base, phase: 'Running', paused: true };
    case 'rolling back':
      return { ...base, phase: 'RollingBack', upgrading: true, rollingBack: true };
    case 'promote requested':
      return { ...base, phase: 'Upgrading', upgrading: true, promoteRequested: true };
    case 'analysis hold':
      return { ...base, phase: 'Paused', upgrading: true, failedAnalysisRun: 'step/b/25/1000' };
  }
}

const INC = 'NewClusterWithIncrementalUpgrade';
const NC = 'NewCluster';
const NONE = 'None';

/** [situation, strategy, the verbs that apply]; every other verb is refused. */
const TABLE: ReadonlyArray<readonly [Situation, UpgradeStrategyType, readonly SteeringVerb[]]> = [
  ['steady', INC, ['pause']],
  ['steady', NC, ['pause']],
  ['steady', NONE, []],
  ['upgrading', INC, ['pause', 'promote', 'abort', 'rollback']],
  // The engine holds a NewCluster upgrade when paused, and switches without intervals: nothing to promote.
  ['upgrading', NC, ['pause', 'abort', 'rollback']],
  ['paused upgrade', INC, ['resume', 'promote', 'abort', 'rollback']],
  ['paused upgrade', NC, ['resume', 'abort', 'rollback']],
  ['paused steady', INC, ['resume']],
  ['paused steady', NONE, ['resume']],
  ['rolling back', INC, []],
  ['promote requested', INC, ['pause', 'abort', 'rollback']],
  // Only a failed run that holds the upgrade can be retried or skipped.
  ['analysis hold', INC, ['pause', 'resume', 'promote', 'abort', 'rollback', 'retry-analysis', 'skip-analysis']],
];

describe.each(TABLE)('%s with %s', (situation, strategy, applying) => {
  test.each(STEERING_VERBS.map((v) => [v]))('%s', (verb) => {
    const s = state(situation, strategy);
    const refusal = steeringRefusal(verb, s);
    if (applying.includes(verb)) expect(refusal).toBeUndefined();
    else expect(refusal).toMatch(new RegExp(`\\(phase ${s.phase}\\)$`));
  });
});

test('abort and promote annotations are spent, and cleared, once no pending cluster remains', () => {
  const both = { 'rayshift.dev/abort': 'true', 'rayshift.dev/promote': 'true', 'rayshift.dev/paused': 'true' };
  expect(spentSteeringAnnotations(both, { pendingClusterName: 'svc-b' })).toEqual([]);
  expect(spentSteeringAnnotations(both, {})).toEqual(['rayshift.dev/abort', 'rayshift.dev/promote']);
  expect(spentSteeringAnnotations({ 'rayshift.dev/promote': 'false' }, {})).toEqual([]);
});

test('refusals say why', () => {
  expect(steeringRefusal('pause', state('steady', NONE))).toBe('the strategy None never upgrades: there is nothing to pause (phase Running)');
  expect(steeringRefusal('pause', state('paused upgrade', INC))).toBe('the upgrade is already paused (phase Paused)');
  expect(steeringRefusal('pause', state('rolling back', INC))).toBe('a rollback is never paused (phase RollingBack)');
  expect(steeringRefusal('resume', state('upgrading', INC))).toBe('the upgrade is not paused (phase Upgrading)');
  expect(steeringRefusal('promote', state('steady', INC))).toBe('nothing to promote: no upgrade is in flight (phase Running)');
  expect(steeringRefusal('promote', state('upgrading', NC))).toBe('a NewCluster upgrade switches as soon as the new cluster serves: there is nothing to promote (phase Upgrading)');
  expect(steeringRefusal('promote', state('promote requested', INC))).toBe('a promotion is already requested (phase Upgrading)');
  expect(steeringRefusal('abort', state('rolling back', INC))).toBe('cannot abort: a rollback is already running (phase RollingBack)');
  expect(steeringRefusal('rollback', state('steady', INC))).toBe('nothing to rollback: no upgrade is in flight (phase Running)');
  expect(steeringRefusal('retry-analysis', state('paused upgrade', INC))).toBe(
    'no failed analysis run holds the upgrade: only a run that failed and paused it (onFailure: pause) can be retried (phase Paused)',
  );
  expect(steeringRefusal('skip-analysis', state('upgrading', INC))).toBe(
    'no failed analysis run holds the upgrade: only a run that failed and paused it (onFailure: pause) can be skipped (phase Upgrading)',
  );
});

describe('patches', () => {
  const record = { verb: 'x', user: 'alice', reason: 'look', time: '2026-11-24T12:00:00.000Z' };
  test.each([
    ['pause', { [PAUSE_ANNOTATION]: 'true' }],
    ['resume', { [PAUSE_ANNOTATION]: null }],
    ['promote', { [PROMOTE_ANNOTATION]: 'true' }],
    ['abort', { [ABORT_ANNOTATION]: 'true' }],
    ['rollback', {}],
  ] as const)('%s sets its annotation and the record', (verb, annotations) => {
    const patch = steeringPatch(verb, state('upgrading', INC), { ...record, verb });
    expect(patch).toEqual({ metadata: { annotations: { ...annotations, [LAST_STEERING_ANNOTATION]: JSON.stringify({ ...record, verb }) } } });
  });

  test('resume clears spec.rayshift.paused when the spec holds the service', () => {
    const bySpec = { ...state('paused upgrade', INC), pausedBySpec: true };
    expect(steeringPatch('resume', bySpec)).toEqual({ metadata: { annotations: { [PAUSE_ANNOTATION]: null } }, spec: { rayshift: { paused: false } } });
    expect(steeringPatch('pause', bySpec).spec).toBeUndefined();
  });

  test('resume of an upgrade its analysis paused retries the failed run, by name', () => {
    const obj = {
      status: {
        phase: 'Paused',
        engineState: {
          phase: 'Paused', reason: 'AnalysisFailed', activeClusterName: 'a', pendingClusterName: 'b', upgradeStrategy: INC,
          analysis: { step: { id: 'step/b/25/1000', phase: 'Failed' }, verdicts: [] },
        },
      },
    };
    const s = steeringStateOf(obj);
    expect(s).toMatchObject({ paused: false, failedAnalysisRun: 'step/b/25/1000' });
    expect(steeringRefusal('resume', s)).toBeUndefined();
    expect(steeringPatch('resume', s)).toEqual({ metadata: { annotations: { [PAUSE_ANNOTATION]: null, [ANALYSIS_OVERRIDE_ANNOTATION]: 'retry:step/b/25/1000' } } });
    // A skipped run holds nothing.
    const skipped = steeringStateOf({ status: { ...obj.status, engineState: { ...obj.status.engineState, analysis: { step: { id: 'x', phase: 'Failed', skipped: true } } } } });
    expect(skipped.failedAnalysisRun).toBeUndefined();
    expect(steeringRefusal('resume', skipped)).toBe('the upgrade is not paused (phase Paused)');
  });

  test('retry-analysis and skip-analysis name the failed run in the override, and leave a pause in place', () => {
    const held = { ...state('analysis hold', INC), paused: true };
    const record = { verb: 'skip-analysis', user: 'alice', reason: 'known noisy metric', time: '2026-11-24T12:00:00.000Z' };
    expect(steeringPatch('retry-analysis', held)).toEqual({ metadata: { annotations: { [ANALYSIS_OVERRIDE_ANNOTATION]: 'retry:step/b/25/1000' } } });
    expect(steeringPatch('skip-analysis', held, record)).toEqual({
      metadata: { annotations: { [ANALYSIS_OVERRIDE_ANNOTATION]: 'skip:step/b/25/1000', [LAST_STEERING_ANNOTATION]: JSON.stringify(record) } },
    });
  });

  test('without a record, only the steering annotation', () => {
    expect(steeringPatch('pause', state('steady', INC))).toEqual({ metadata: { annotations: { [PAUSE_ANNOTATION]: 'true' } } });
  });
});

describe('steeringStateOf', () => {
  const engineState = { phase: 'Upgrading', reason: 'Migrating', activeClusterName: 'a', pendingClusterName: 'b', upgradeStrategy: INC };

  test('an upgrade in flight keeps the strategy it started with, whatever the spec says now', () => {
    const s = steeringStateOf({ spec: { upgradeStrategy: { type: 'None' } }, status: { phase: 'Upgrading', engineState } });
    expect(s).toEqual({ phase: 'Upgrading', strategy: INC, upgrading: true, rollingBack: false, paused: false, pausedBySpec: false, promoteRequested: false });
  });

  test('a steady service takes the spec strategy, NewCluster when unset', () => {
    const steady = { phase: 'Running', reason: 'UpToDate', activeClusterName: 'a' };
    expect(steeringStateOf({ spec: { upgradeStrategy: { type: 'None' } }, status: { phase: 'Running', engineState: steady } })).toMatchObject({ strategy: 'None', upgrading: false });
    expect(steeringStateOf({ spec: {}, status: { phase: 'Running', engineState: steady } })).toMatchObject({ strategy: 'NewCluster' });
    expect(steeringStateOf({})).toMatchObject({ phase: 'Unknown', strategy: 'NewCluster', upgrading: false });
  });

  test('pause by annotation or spec, promote requested, rollback', () => {
    const annotations = { [PAUSE_ANNOTATION]: 'true', [PROMOTE_ANNOTATION]: 'true' };
    expect(steeringStateOf({ metadata: { annotations }, status: { engineState } })).toMatchObject({ paused: true, pausedBySpec: false, promoteRequested: true });
    expect(steeringStateOf({ spec: { rayshift: { paused: true } }, status: { engineState } })).toMatchObject({ paused: true, pausedBySpec: true });
    expect(steeringStateOf({ status: { phase: 'RollingBack', engineState: { ...engineState, rollback: 'Aborted' } } })).toMatchObject({ rollingBack: true, upgrading: true });
  });
});

test('the last steering record is read from its annotation; garbage is ignored', () => {
  const record = { verb: 'pause', user: 'alice', reason: 'look', time: '2026-11-24T12:00:00.000Z' };
  expect(lastSteeringOf({ [LAST_STEERING_ANNOTATION]: JSON.stringify(record) })).toEqual(record);
  expect(lastSteeringOf({ [LAST_STEERING_ANNOTATION]: '{' })).toBeUndefined();
  expect(lastSteeringOf(undefined)).toBeUndefined();
});
