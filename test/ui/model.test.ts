/**
 * The dashboard's view logic (pure, DOM-free): samples, the plan's projection and dip, countdown texts,
 * replicas, events in order, steering applicability and labels, and the SSE reader.
 */
import { planRayService } from '../../lib/engine/plan-rayservice';
import type { UpgradePlanJson, UpgradeStatusJson } from '../../ui/src/api-types';
import { ApiError } from '../../ui/src/api-error';
import { STEERING_VERBS } from '../../ui/src/api-types';
import { appendSample, eventsNewestFirst, formatCountdown, lastSteering, ownerText, phaseLabel, planDipText, projection, replicasText, sampleOf, spokenCountdown, verbLabel, verbRefusal } from '../../ui/src/model';
import { readEventStream } from '../../ui/src/sse';

const T0 = Date.parse('2026-11-21T12:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

function shifting(pendingWeight: number, migratedAt: number, extra: Partial<UpgradeStatusJson> = {}): UpgradeStatusJson {
  return {
    phase: 'UPGRADE_PHASE_SHIFTING',
    reason: 'WaitingForInterval',
    active: { cluster: 'llm-a', targetCapacity: 100, trafficRoutedPercent: 100 - pendingWeight, lastTrafficMigratedTime: iso(migratedAt) },
    pending: { cluster: 'llm-b', targetCapacity: 50, trafficRoutedPercent: pendingWeight, lastTrafficMigratedTime: iso(migratedAt) },
    ...extra,
  };
}

/** The engine's own plan of an incremental service's options (step 25 %, surge 50 %, 3 s), in the API's JSON shape. */
function planJson(): UpgradePlanJson {
  const p = planRayService({ kind: 'RayService', name: 'llm', options: { strategy: 'NewClusterWithIncrementalUpgrade', maxSurgePercent: 50, stepSizePercent: 25, intervalSeconds: 3, rayClusterDeletionDelaySeconds: 0, progressDeadlineSeconds: 600 } });
  return { strategy: p.strategy, steps: p.steps.map((s) => ({ ...s })), durationSeconds: p.durationSeconds, peakCapacityPercent: p.peakCapacityPercent, outcome: p.outcome };
}

describe('samples', () => {
  test('a status without a pending side counts the pending side as 0', () => {
    expect(sampleOf({ active: { cluster: 'a', targetCapacity: 100, trafficRoutedPercent: 100 } }, T0)).toEqual({ at: T0, activeWeight: 100, pendingWeight: 0, activeCapacity: 100, pendingCapacity: 0 });
  });

  test('an unchanged split is not appended again; a changed one is', () => {
    const h1 = appendSample([], sampleOf(shifting(25, T0), T0));
    expect(appendSample(h1, sampleOf(shifting(25, T0), T0 + 500))).toBe(h1);
    expect(appendSample(h1, sampleOf(shifting(50, T0), T0 + 500)).map((s) => s.pendingWeight)).toEqual([25, 50]);
  });
});

describe('countdown text', () => {
  test('tenths under a minute, minutes above, "due now" at zero', () => {
    expect(formatCountdown(2_710)).toBe('2.8 s');
    expect(formatCountdown(1)).toBe('0.1 s');
    expect(formatCountdown(0)).toBe('due now');
    expect(formatCountdown(-5)).toBe('due now');
    expect(formatCountdown(125_000)).toBe('2 min 05 s');
  });

  test('the spoken countdown is coarse, so a polite live region is not noise', () => {
    const spoken = new Set(Array.from({ length: 300 }, (_, i) => spokenCountdown(30_000 - i * 100)));
    expect(spoken.size).toBeLessThanOrEqual(4);
    expect(spokenCountdown(0)).toBe('The next traffic step is due now.');
  });
});

describe('projection', () => {
  test('the plan after the current split, anchored at the last move', () => {
    const current = sampleOf(shifting(25, T0), T0 + 100);
    const p = projection(planJson(), current, T0);
    expect(p[0]).toEqual({ ...current, at: T0 });
    // Every later step of the plan, at its offset from the matched step (the shift to 25 %).
    const steps = planJson().steps!.filter((s) => s.action !== 'promote');
    const matched = steps.findIndex((s) => s.pendingWeight === 25);
    const offset = (s: (typeof steps)[number]) => (Number(s.atSeconds) - Number(steps[matched].atSeconds)) * 1000;
    expect(p.map((s) => [s.at - T0, s.pendingWeight])).toEqual([[0, 25], ...steps.slice(matched + 1).map((s) => [offset(s), s.pendingWeight])]);
    expect(p.length).toBeGreaterThan(3);
    // Up to the old cluster at no traffic and no capacity; the promotion (a renaming of the sides) is left out.
    expect(p[p.length - 1]).toMatchObject({ activeWeight: 0, activeCapacity: 0, pendingWeight: 100, pendingCapacity: 100 });
  });

  test('from the start of an upgrade (pending cluster at no capacity yet)', () => {
    const start = sampleOf({ active: { cluster: 'a', targetCapacity: 100, trafficRoutedPercent: 100 }, pending: { cluster: 'b', targetCapacity: 0, trafficRoutedPercent: 0 } }, T0);
    expect(projection(planJson(), start, T0)).toHaveLength(planJson().steps!.filter((s) => s.action !== 'promote').length + 1);
  });

  test('nothing when the split is not on the plan or there is no plan', () => {
    expect(projection(planJson(), sampleOf(shifting(30, T0), T0), T0)).toEqual([]);
    expect(projection(undefined, sampleOf(shifting(25, T0), T0), T0)).toEqual([]);
  });
});

describe('the plan\'s dip, worded as `rayshift plan` words it', () => {
  test('the API\'s dip (JSON) as one line: lowest served, how often, how long in all, from when to when', () => {
    const plan: UpgradePlanJson = { strategy: 'NewClusterWithIncrementalUpgrade', outcome: 'promoted', dip: { value: 50, from: 0, until: 40, lasts: 30, times: 2 } };
    expect(planDipText(plan)).toBe('dip to 50% served 2 times, 30s in all (0s to 40s): capacityPolicy shrinkFirst, if the surge does not fit');
    expect(planDipText({ ...plan, dip: { value: 75, from: 10, until: 100, lasts: 90, times: 1 } })).toBe('dip to 75% served 1 time, 1m30s in all (10s to 1m40s): capacityPolicy shrinkFirst, if the surge does not fit');
  });

  test('nothing when the plan has no dip, or there is no plan', () => {
    expect(planDipText(planJson())).toBeUndefined();
    expect(planDipText(undefined)).toBeUndefined();
  });
});

describe('verbRefusal (the server\'s steering answer, shown as it is)', () => {
  const steering = [
    { verb: 'pause' },
    { verb: 'resume', refusal: 'the upgrade is not paused (phase Upgrading)' },
  ];

  test('a verb applies when the status names it without a refusal', () => {
    expect(verbRefusal('pause', shifting(25, T0, { steering }))).toBeUndefined();
  });

  test('a refusal is the server\'s words, naming its phase', () => {
    expect(verbRefusal('resume', shifting(25, T0, { steering }))).toBe('the upgrade is not paused (phase Upgrading)');
  });

  test('a verb the status does not name does not apply (a service KubeRay executes takes no steering)', () => {
    expect(verbRefusal('promote', shifting(25, T0, { steering }))).toBe('the server names no steering for this service (only the rayshift operator is steered)');
    expect(verbRefusal('pause', shifting(25, T0))).toBe('the server names no steering for this service (only the rayshift operator is steered)');
  });

  test('nothing applies without a status', () => {
    expect(verbRefusal('pause', undefined)).toBe('no upgrade status yet');
  });
});

test('the last steering record is read from its annotation; garbage is ignored', () => {
  const record = { verb: 'pause', user: 'alice', reason: 'look', time: iso(T0) };
  expect(lastSteering({ annotations: { 'rayshift.dev/last-steering': JSON.stringify(record) } })).toEqual(record);
  expect(lastSteering({ annotations: { 'rayshift.dev/last-steering': '{' } })).toBeUndefined();
  expect(lastSteering({})).toBeUndefined();
});

test('every steering verb has a label: hyphens are spaces, the first letter capital', () => {
  expect(STEERING_VERBS.map(verbLabel)).toEqual(expect.arrayContaining(['Pause', 'Rollback', 'Retry analysis', 'Skip analysis']));
});

test('replicas read ready/target, with a dash for a count not reported', () => {
  expect(replicasText({ cluster: 'a', readyReplicas: 3, targetReplicas: 4 })).toBe('3/4');
  expect(replicasText({ cluster: 'a', readyReplicas: 0, targetReplicas: 4 })).toBe('0/4');
  expect(replicasText({ cluster: 'a', targetReplicas: 4 })).toBe('—/4');
  expect(replicasText({ cluster: 'a' })).toBe('—');
  expect(replicasText(undefined)).toBe('—');
});

test('events are shown newest first (the API lists them oldest first)', () => {
  const events = [
    { reason: 'Created', lastTime: iso(T0) },
    { reason: 'AnalysisFailed', type: 'Warning', lastTime: iso(T0 + 2_000) },
    { reason: 'Scaled', lastTime: iso(T0 + 1_000) },
  ];
  expect(eventsNewestFirst(events).map((e) => e.reason)).toEqual(['AnalysisFailed', 'Scaled', 'Created']);
  expect(events[0].reason).toBe('Created');
});

test('phase labels', () => {
  expect(phaseLabel('UPGRADE_PHASE_ROLLING_BACK')).toBe('Rolling back');
  expect(phaseLabel(undefined)).toBe('Unknown');
});

describe('readEventStream', () => {
  function streamOf(chunks: string[]): ReadableStream<Uint8Array> {
    const enc = new TextEncoder();
    return new ReadableStream({
      start(c) {
        for (const ch of chunks) c.enqueue(enc.encode(ch));
        c.close();
      },
    });
  }

  test('messages split across chunks, CRLF line ends and multi-line data', async () => {
    const got: string[] = [];
    let chunks = 0;
    await readEventStream(streamOf(['event: message\r\ndata: {"a"', ':1}\r\n\r\nevent: message\ndata: x\ndata: y\n\n', ': comment\n\n']), (d) => got.push(d), () => chunks++);
    expect(got).toEqual(['{"a":1}', 'x\ny']);
    expect(chunks).toBe(3);
  });

  test('an error event rejects with its google.rpc.Status', async () => {
    const err = await readEventStream(streamOf(['event: message\ndata: 1\n\nevent: error\ndata: {"code":16,"message":"token expired"}\n\n']), () => undefined, () => undefined).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ code: 16, message: 'token expired' });
  });
});

test('the owner reads replica and shard from the status, shard 0 included; nothing without a replica', () => {
  expect(ownerText({ owner: { replica: 'rayshift-operator-1', shard: 3 } } as UpgradeStatusJson)).toBe('replica rayshift-operator-1, shard 3');
  expect(ownerText({ owner: { replica: 'rayshift-operator-1', shard: 0 } } as UpgradeStatusJson)).toBe('replica rayshift-operator-1, shard 0');
  expect(ownerText({ owner: { replica: 'rayshift-operator-1' } } as UpgradeStatusJson)).toBe('replica rayshift-operator-1');
  expect(ownerText({ owner: {} } as UpgradeStatusJson)).toBeUndefined();
  expect(ownerText({} as UpgradeStatusJson)).toBeUndefined();
  expect(ownerText(undefined)).toBeUndefined();
});
