/**
 * The checks every upgrade (or rollback) under load must pass. Each check is computed first and
 * all are compared in one expectation, so a failing run reports every violated property at once
 * with what was seen.
 */
import { perSecondShare, perSecondShareBySend, replicaMismatches, shareDecreases, switchLagMs, windowShares, windowsOutOfTolerance } from './analysis';
import { RunUnderLoad } from './scenario';

/** Zero failed, timed-out or skipped requests, as one comparable object. */
export function failureCounts(run: RunUnderLoad): Record<string, unknown> {
  const t = run.totals;
  return { failures: t.failures, timeouts: t.timeouts, skipped: t.skipped, failureDetails: t.failureDetails, unanswered: t.sent - t.ok };
}

const NO_FAILURES = { failures: 0, timeouts: 0, skipped: 0, failureDetails: {}, unanswered: 0 };

/** Zero failed, timed-out or skipped requests. */
export function expectNoFailures(run: RunUnderLoad): void {
  expect(failureCounts(run)).toEqual(NO_FAILURES);
}

/** Answers sent once Traefik's data plane held the route's last weight vector that did not come from `version`. */
export function tailNotFrom(run: RunUnderLoad, version: string): { answers: number; others: number } {
  const lastApplied = run.applied[run.applied.length - 1]?.at ?? Infinity;
  const tail = run.requests.filter((r) => (r.sentAt ?? r.at) >= lastApplied);
  return { answers: tail.length, others: tail.filter((r) => r.version !== version).length };
}

/** What one forward upgrade must show (see issue 8). */
export function expectForwardUpgrade(run: RunUnderLoad, o: { oldVersion: string; newVersion: string; newCluster: string; replicas: number }): void {
  const newBackend = `${o.newCluster}-serve-svc`;
  const windows = windowShares(run.applied, run.requests, o.newVersion, (b) => b === newBackend, { endAt: run.loadEndedAt });
  const onNew = run.serve.filter((s) => s.cluster === o.newCluster);
  const capacities = onNew.map((s) => (s.targetCapacity === null ? 100 : s.targetCapacity));
  const last = onNew[onNew.length - 1];
  const tail = tailNotFrom(run, o.newVersion);
  const observed = {
    // zero failed requests
    ...failureCounts(run),
    // both versions answered
    oldVersionAnswered: (run.totals.versions[o.oldVersion] ?? 0) > 0,
    newVersionAnswered: (run.totals.versions[o.newVersion] ?? 0) > 0,
    // the new version's per-second share never decreases (beyond ±3 requests of round-robin granularity)
    shareDecreases: shareDecreases(run.requests.length > 0 ? perSecondShareBySend(run.requests, run.loadStartedAt, o.newVersion) : perSecondShare(run.seconds, o.newVersion)),
    // after each step settled, the observed share is within ±5 points of the route weight (plus
    // two requests of granularity per window, see analysis.ts)
    measuredWindows: windows.length > 0,
    windowsOffByMoreThan5Points: windowsOutOfTolerance(windows),
    // 100 % new version at the end: the route has only the new backend and every later answer is new
    finalWeights: run.history[run.history.length - 1].weights,
    answersAfterTheLastStep: tail.answers > 0,
    answersAfterTheLastStepFromOthers: tail.others,
    // the real Serve replicas follow target_capacity (Serve's rounding) whenever Serve reports a settled state
    replicaMismatches: replicaMismatches(run.serve),
    newClusterSampled: onNew.length > 0,
    newClusterCapacityDecreases: capacities.filter((c, i) => i > 0 && c < capacities[i - 1]).length,
    newClusterAtTheEnd: last ? { targetCapacity: last.targetCapacity, running: last.running } : undefined,
  };
  expect(observed).toEqual({
    ...NO_FAILURES,
    oldVersionAnswered: true,
    newVersionAnswered: true,
    shareDecreases: [],
    measuredWindows: true,
    windowsOffByMoreThan5Points: [],
    finalWeights: [{ name: newBackend, weight: 100 }],
    answersAfterTheLastStep: true,
    answersAfterTheLastStepFromOthers: 0,
    replicaMismatches: [],
    newClusterSampled: true,
    newClusterCapacityDecreases: 0,
    newClusterAtTheEnd: { targetCapacity: null, running: o.replicas },
  });
}

/** A one-line summary of a run for the test output (with the seconds that failed, if any). */
export function summary(label: string, run: RunUnderLoad, rate: number): string {
  const t = run.totals;
  const rel = (at: number) => ((at - run.loadStartedAt) / 1000).toFixed(1);
  const failing = run.seconds.filter((x) => x.failures + x.timeouts > 0).map((x) => `${x.second}s:${x.failures + x.timeouts}`);
  const extra = failing.length
    ? `; failing seconds (since load start) ${failing.join(' ')}; spec change at ${rel(run.changedAt)} s, weight changes at ${run.history.map((h) => `${rel(h.at)} s ${JSON.stringify(h.weights.map((w) => w.weight))}`).join(', ')}`
    : '';
  const late = run.requests.map((r) => (r.sentAt ?? r.at) - r.at).sort((a, b) => a - b);
  const sendLag = late.length ? ` send lag p99 ${late[Math.floor(late.length * 0.99)]} ms max ${late[late.length - 1]} ms,` : '';
  return `[e2e] ${label}: offered ${rate}/s, answered ${t.ok}/${t.sent} (failures ${t.failures}, timeouts ${t.timeouts}, skipped ${t.skipped}), versions ${JSON.stringify(t.versions)},${sendLag} ${run.history.length} route weight vectors, spec change to done ${((run.doneAt - run.changedAt) / 1000).toFixed(1)} s${extra}`;
}

/** One line per judged window (weight, observed, answers, tolerance) and the data plane's lag at the switch to `newVersion` alone, for the test output. */
export function windowReport(label: string, run: RunUnderLoad, newVersion: string, newCluster: string): string {
  const isNew = (b: string) => b === `${newCluster}-serve-svc`;
  const windows = windowShares(run.applied, run.requests, newVersion, isNew, { endAt: run.loadEndedAt });
  const lag = switchLagMs(run.history, run.requests, newVersion, isNew);
  const rows = windows.map((w) => `${w.expectedPercent.toFixed(0)}%→${w.observedPercent.toFixed(1)}% (n ${w.answers}, ±${w.tolerancePoints.toFixed(1)})`);
  return `[e2e] ${label}: windows ${rows.join(', ')}; last old answer ${lag === undefined ? 'n/a' : `${lag} ms`} after the switch to 100 % ${newVersion} was seen`;
}
