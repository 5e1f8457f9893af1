/**
 * What the pages show, as pure functions of the API's JSON: samples of both route weights and both
 * target capacities over time, the plan's projection from the current step and its dip, countdown
 * texts (the due time itself is the status's `next_traffic_step_time`, computed by the server),
 * clusters' replicas, events in order, which steering verbs apply (as the server reports them) and
 * their labels, and the last steering record.
 */
import { dipText } from '../../lib/engine/plan-text';
import { lastSteeringOf, type SteeringRecord } from '../../lib/engine/steering';
import { describeOwner } from '../../lib/engine/shards';
import type { ClusterSideJson, RayServiceEventJson, RayServiceJson, SteeringVerb, UpgradePlanJson, UpgradeStatusJson } from './api-types';

/** Both weights and both target capacities at one instant (epoch ms). */
export interface Sample {
  readonly at: number;
  readonly activeWeight: number;
  readonly pendingWeight: number;
  readonly activeCapacity: number;
  readonly pendingCapacity: number;
}

/** Most samples kept per service. */
const MAX_SAMPLES = 2_000;

/** The split of an upgrade status at `at`; a side without a pending cluster counts as 0. */
export function sampleOf(u: UpgradeStatusJson, at: number): Sample {
  return {
    at,
    activeWeight: u.active?.trafficRoutedPercent ?? 0,
    pendingWeight: u.pending?.trafficRoutedPercent ?? 0,
    activeCapacity: u.active?.targetCapacity ?? 0,
    pendingCapacity: u.pending?.targetCapacity ?? 0,
  };
}

function sameValues(a: Sample, b: Sample): boolean {
  return a.activeWeight === b.activeWeight && a.pendingWeight === b.pendingWeight && a.activeCapacity === b.activeCapacity && a.pendingCapacity === b.pendingCapacity;
}

/** `history` with `s` appended when any value changed (the chart holds each value until the next sample). */
export function appendSample(history: readonly Sample[], s: Sample): Sample[] {
  const last = history[history.length - 1];
  if (last && sameValues(last, s)) return history as Sample[];
  const next = [...history, s];
  return next.length > MAX_SAMPLES ? next.slice(next.length - MAX_SAMPLES) : next;
}

/** A JSON `double` (which may be the string `NaN` or `Infinity`) as a finite number, else 0. */
export function num(v: number | string | undefined): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

/** Milliseconds since the epoch of an RFC 3339 timestamp, when there is one. */
export function timeOf(t: string | undefined): number | undefined {
  if (!t) return undefined;
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? undefined : ms;
}

/** An RFC 3339 timestamp as the viewer's local time of day; empty when there is none. */
export function clockOf(t: string | undefined): string {
  const ms = timeOf(t);
  return ms === undefined ? '' : new Date(ms).toLocaleTimeString();
}

/** True while an upgrade (or its rollback) is in flight: both clusters exist. */
export function inFlight(u: UpgradeStatusJson | undefined): boolean {
  return !!u?.active?.cluster && !!u?.pending?.cluster;
}

/** A cluster's Serve replicas as `ready/target`, `—` for a count the executor does not report. */
export function replicasText(side: ClusterSideJson | undefined): string {
  const ready = side?.readyReplicas;
  const target = side?.targetReplicas;
  if (ready === undefined && target === undefined) return '—';
  return `${ready ?? '—'}/${target ?? '—'}`;
}

/** Which operator replica works on the service, as the status names it (`replica …, shard …`), or undefined when none recorded itself. */
export function ownerText(u: UpgradeStatusJson | undefined): string | undefined {
  const replica = u?.owner?.replica;
  return replica ? describeOwner({ replica, ...(u?.owner?.shard !== undefined ? { shard: u.owner.shard } : {}) }) : undefined;
}

/** Events newest first (the API lists them oldest first). */
export function eventsNewestFirst(events: readonly RayServiceEventJson[]): RayServiceEventJson[] {
  return [...events].sort((a, b) => (timeOf(b.lastTime) ?? 0) - (timeOf(a.lastTime) ?? 0));
}

/** A countdown as the page shows it: tenths of a second under a minute, `due now` at zero. */
export function formatCountdown(leftMs: number): string {
  if (leftMs <= 0) return 'due now';
  if (leftMs < 60_000) return `${(Math.ceil(leftMs / 100) / 10).toFixed(1)} s`;
  const s = Math.ceil(leftMs / 1000);
  return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
}

/** A coarse countdown for screen readers (changes rarely, so announcing it politely is not noise). */
export function spokenCountdown(leftMs: number): string {
  if (leftMs <= 0) return 'The next traffic step is due now.';
  const s = Math.ceil(leftMs / 1000);
  const rounded = s > 60 ? `${Math.ceil(s / 60)} minutes` : s > 10 ? `${Math.ceil(s / 10) * 10} seconds` : 'a few seconds';
  return `The next traffic step is due in about ${rounded}.`;
}

/**
 * The rest of the plan as future samples: the first plan step whose split equals the current one is
 * anchored at `anchor` (the last traffic move, or now), and the later steps follow at their planned
 * offsets. Empty when the current split is not on the plan.
 */
export function projection(plan: UpgradePlanJson | undefined, current: Sample, anchor: number): Sample[] {
  if (!plan?.steps?.length) return [];
  type Step = { atSeconds?: number | string; activeWeight?: number; pendingWeight?: number; activeTargetCapacity?: number; pendingTargetCapacity?: number };
  // The state before the first step (the pending cluster at no capacity and no traffic) starts the plan.
  // The promotion only swaps which cluster is called active; the chart's history shows it when it happens.
  const steps: Step[] = [{ atSeconds: 0, activeWeight: 100, pendingWeight: 0, activeTargetCapacity: 100, pendingTargetCapacity: 0 }, ...plan.steps.filter((s) => s.action !== 'promote')];
  const splitOf = (s: Step): Omit<Sample, 'at'> => ({
    activeWeight: s.activeWeight ?? 0,
    pendingWeight: s.pendingWeight ?? 0,
    activeCapacity: s.activeTargetCapacity ?? 0,
    pendingCapacity: s.pendingTargetCapacity ?? 0,
  });
  const from = steps.findIndex((s) => sameValues({ at: 0, ...splitOf(s) }, current));
  if (from < 0) return [];
  const t0 = num(steps[from].atSeconds);
  return [{ ...current, at: anchor }, ...steps.slice(from + 1).map((s) => ({ at: anchor + (num(s.atSeconds) - t0) * 1000, ...splitOf(s) }))];
}

/**
 * The plan's dip (a `capacityPolicy: shrinkFirst` upgrade serves less than 100% of its load for a
 * while), worded as `rayshift plan` words it (`dipText`, the one wording); undefined when the plan has none.
 */
export function planDipText(plan: UpgradePlanJson | undefined): string | undefined {
  const d = plan?.dip;
  if (d === undefined) return undefined;
  return dipText({ value: d.value ?? 0, times: d.times ?? 0, from: num(d.from), until: num(d.until), lasts: num(d.lasts) });
}

/**
 * Why a steering verb does not apply to the current status, as the server words it (the status's
 * `steering`: the rules of lib/engine/steering.ts, which also refuse the verb when it is called);
 * `undefined` when it applies.
 */
export function verbRefusal(verb: SteeringVerb, u: UpgradeStatusJson | undefined): string | undefined {
  if (u === undefined) return 'no upgrade status yet';
  const state = u.steering?.find((s) => s.verb === verb);
  // A service KubeRay executes has no steering: only the rayshift operator honours it.
  if (state === undefined) return 'the server names no steering for this service (only the rayshift operator is steered)';
  return state.refusal ? state.refusal : undefined;
}

/** A steering verb as its button says it: `retry-analysis` → `Retry analysis`. */
export function verbLabel(verb: SteeringVerb): string {
  const words = verb.replace(/-/g, ' ');
  return words[0].toUpperCase() + words.slice(1);
}

/** The last steering verb recorded on a service (`rayshift.dev/last-steering`). */
export type { SteeringRecord } from '../../lib/engine/steering';

/** The service's last steering record, when it has a readable one. */
export function lastSteering(svc: RayServiceJson | undefined): SteeringRecord | undefined {
  return lastSteeringOf(svc?.annotations);
}

/** A phase enum as words: `UPGRADE_PHASE_ROLLING_BACK` → `Rolling back`. */
export function phaseLabel(phase: string | undefined): string {
  const words = (phase ?? 'UPGRADE_PHASE_UNSPECIFIED').replace(/^UPGRADE_PHASE_/, '').toLowerCase().replace(/_/g, ' ');
  return words === 'unspecified' ? 'Unknown' : words[0].toUpperCase() + words.slice(1);
}
