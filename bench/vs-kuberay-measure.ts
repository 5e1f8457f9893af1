/**
 * Measurements of `vs-kuberay.bench.ts`, the same for both controllers: traffic moves seen by one
 * HTTPRoute watch (arrival time), API writes from kube-apiserver's audit log by user and user
 * agent, and CPU seconds of a process from /proc. Not a benchmark itself.
 */
import * as fs from 'node:fs';
import type { KubeClient } from '../lib/runtime/kube/client';
import type { Informer } from '../lib/runtime/kube/informer';
import { quantile } from './operator-harness';

const HTTPROUTE = { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', plural: 'httproutes', namespaced: true };

/** One traffic move: a change of a route's non-zero backend weights, as the watch delivered it. */
export interface TrafficMove {
  readonly route: string;
  readonly at: number;
  readonly weights: string;
}

/**
 * Records every traffic move of every HTTPRoute. Backends of weight 0 are left out of the
 * comparison, so adding the pending backend at 0 % or dropping the drained one is no move; each
 * controller's moves are compared by the same rule.
 */
export class TrafficMoveRecorder {
  readonly moves: TrafficMove[] = [];
  private readonly last = new Map<string, string>();
  private readonly informer: Informer;

  constructor(client: KubeClient) {
    this.informer = client.watch(HTTPROUTE, '*', (e) => {
      if (e.type === 'delete') return;
      const route = `${e.object.metadata.namespace}/${e.object.metadata.name}`;
      const rule = ((e.object.spec as { rules?: { backendRefs?: { name: string; weight?: number }[] }[] }).rules ?? [])[0];
      const weights = (rule?.backendRefs ?? [])
        .filter((b) => (b.weight ?? 1) > 0)
        .map((b) => `${b.name}=${b.weight ?? 1}`)
        .sort()
        .join(',');
      if (this.last.get(route) === weights) return;
      const first = !this.last.has(route);
      this.last.set(route, weights);
      if (!first) this.moves.push({ route, at: Date.now(), weights });
    }, { resyncIntervalMs: 0 });
  }

  async start(): Promise<void> {
    this.informer.start();
    await this.informer.waitForSync();
  }

  stop(): void {
    this.informer.stop();
  }

  /** Routes of namespace `ns` seen so far. */
  routesIn(ns: string): number {
    return [...this.last.keys()].filter((k) => k.startsWith(`${ns}/`)).length;
  }

  /** Moves of namespace `ns` at or after `since`. */
  movesIn(ns: string, since: number): TrafficMove[] {
    return this.moves.filter((m) => m.route.startsWith(`${ns}/`) && m.at >= since);
  }
}

/** Lateness of traffic moves against their due time (previous move of the same route + interval), ms. */
export interface MoveLateness {
  readonly moves: number;
  /** Interval-bound moves: the previous move did not fill the new cluster's capacity, so only the clock held this one. */
  readonly timed: number;
  /** Lateness of the interval-bound moves. */
  readonly p50: number;
  readonly p99: number;
  /** Moves after one that filled the new cluster's target capacity: they also waited for a capacity step. */
  readonly capacityBound: number;
  readonly capacityP50: number;
  /** Smallest lateness over every move with a due time (negative: before its due time). */
  readonly earliest: number;
}

/**
 * Lateness of `moves` (one upgrade per route) with interval `intervalS`. The new cluster's backend
 * is the one that gains weight; a move whose predecessor left it at a multiple of `maxSurge` (its
 * target capacity, which grows by maxSurge) followed a capacity step, for KubeRay and rayshift alike.
 */
export function moveLateness(moves: readonly TrafficMove[], intervalS: number, maxSurge: number): MoveLateness {
  const byRoute = new Map<string, TrafficMove[]>();
  for (const m of moves) byRoute.set(m.route, [...(byRoute.get(m.route) ?? []), m]);
  const timed: number[] = [];
  const capacity: number[] = [];
  for (const list of byRoute.values()) {
    const parse = (m: TrafficMove) => new Map(m.weights.split(',').map((w) => [w.split('=')[0], Number(w.split('=')[1])] as [string, number]));
    const first = parse(list[0]);
    const last = parse(list[list.length - 1]);
    // The new cluster's backend is the one that gained the most weight over the upgrade.
    const pending = [...last.keys()].sort((x, y) => last.get(y)! - (first.get(y) ?? 0) - (last.get(x)! - (first.get(x) ?? 0)))[0];
    const pendingWeight = (m: TrafficMove) => parse(m).get(pending) ?? 0;
    for (let i = 1; i < list.length; i++) {
      const late = list[i].at - (list[i - 1].at + intervalS * 1000);
      (pendingWeight(list[i - 1]) % maxSurge === 0 ? capacity : timed).push(late);
    }
  }
  const sorted = (xs: number[]) => xs.sort((a, b) => a - b);
  sorted(timed);
  sorted(capacity);
  const all = sorted([...timed, ...capacity]);
  return {
    moves: moves.length,
    timed: timed.length,
    p50: quantile(timed, 0.5),
    p99: quantile(timed, 0.99),
    capacityBound: capacity.length,
    capacityP50: quantile(capacity, 0.5),
    earliest: all.length ? all[0] : NaN,
  };
}

/**
 * The audit policy: metadata of every write and of every request through a Pod or Service proxy;
 * with `readsOf`, also the reads (get, list, watch) of that user (`--profile`: what the operator
 * asks the API server for, at some extra cost to kube-apiserver, so not in the plain run).
 */
export function auditPolicy(readsOf?: string): string {
  const reads = readsOf ? `- level: Metadata\n  users: [${readsOf}]\n  verbs: [get, list, watch]\n` : '';
  return `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  resources: [{group: "", resources: [pods/proxy, services/proxy]}]
- level: Metadata
  verbs: [create, update, patch, delete, deletecollection]
${reads}- level: None
`;
}

/** One write, one read (get, list, watch) or one request through a proxy (a call to Ray, not a write), from the audit log. */
export interface AuditedWrite {
  /** A request through `pods/proxy` or `services/proxy`. */
  readonly proxy: boolean;
  /** A get, list or watch (audited with `auditPolicy(user)` only). */
  readonly read: boolean;
  readonly user: string;
  readonly userAgent: string;
  /** `verb resource[/subresource]`. */
  readonly what: string;
  readonly at: number;
}

/** Every write in the audit log `file` (JSON lines, stage ResponseComplete). */
export function auditedWrites(file: string): AuditedWrite[] {
  const out: AuditedWrite[] = [];
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!line) continue;
    const e = JSON.parse(line) as { stage: string; verb: string; user?: { username?: string }; userAgent?: string; objectRef?: { resource?: string; subresource?: string }; requestReceivedTimestamp: string };
    if (e.stage !== 'ResponseComplete') continue;
    const ref = e.objectRef ?? {};
    out.push({
      proxy: ref.subresource === 'proxy',
      read: e.verb === 'get' || e.verb === 'list' || e.verb === 'watch',
      user: e.user?.username ?? '',
      userAgent: e.userAgent ?? '',
      what: `${e.verb} ${ref.resource ?? '?'}${ref.subresource ? `/${ref.subresource}` : ''}`,
      at: Date.parse(e.requestReceivedTimestamp),
    });
  }
  return out;
}

/** `what` counts of `writes`, largest first, as `patch rayservices/status 12, …`. */
export function writeBreakdown(writes: readonly AuditedWrite[]): string {
  const counts = new Map<string, number>();
  for (const w of writes) counts.set(w.what, (counts.get(w.what) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ${n}`).join(', ');
}

/** Pid of the process whose command line (NUL-separated) passes `match`; throws when none. */
export function findPid(what: string, match: (argv: string[]) => boolean): number {
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (match(fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0'))) return Number(pid);
    } catch {
      // gone
    }
  }
  throw new Error(`no process found for ${what}`);
}

/** CPU seconds (user + system) a process has used so far. */
export function cpuSeconds(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100; // utime, stime in USER_HZ
}
