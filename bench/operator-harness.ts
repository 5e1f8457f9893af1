/**
 * Shared pieces of the operator benchmarks (`operator-lateness.bench.ts`, `operator-scale.bench.ts`):
 * an API client that counts its requests, a recorder that measures traffic-step lateness from the
 * bench's own watches, and small statistics helpers. Not a benchmark itself.
 *
 * Lateness of a traffic step = when the bench's HTTPRoute watch first sees the new weight minus the
 * step's due time (`lastTrafficMigratedTime` carried by the status that decided the step + interval).
 * A step counts as "interval-bound" (timed) when it directly follows another traffic step of the
 * same upgrade with no capacity move in between (capacity was ready, so the executor only waited
 * for the clock); the other steps waited for capacity too and are reported separately (they are
 * never allowed to be early either).
 */
import * as fs from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '../lib/runtime/kube/client';
import { Informer } from '../lib/runtime/kube/informer';
import { HttpRequest, HttpResponse, KubeConfigTransport, StreamHandle, Transport } from '../lib/runtime/kube/transport';

/** Requests made through a counting client, by `METHOD kind[/subresource]`. */
export type RequestCounts = Record<string, number>;

/** A KubeClient whose requests (not watch streams) are counted and timed (total ms) by method and resource. */
export function countingClient(kubeconfigPath: string): { client: KubeClient; counts: RequestCounts; millis: RequestCounts; statusReasons: RequestCounts; reset(): void } {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  const inner = new KubeConfigTransport(kc);
  const counts: RequestCounts = {};
  const millis: RequestCounts = {};
  /** RayService status writes by the `phase/reason` they carry. */
  const statusReasons: RequestCounts = {};
  const transport: Transport = {
    async request(req: HttpRequest): Promise<HttpResponse> {
      const k = `${req.method} ${resourceOf(req.path)}`;
      counts[k] = (counts[k] ?? 0) + 1;
      if (k === 'PATCH rayservices/status') {
        const r = statusReason(req.body);
        statusReasons[r] = (statusReasons[r] ?? 0) + 1;
      }
      const t = performance.now();
      try {
        return await inner.request(req);
      } finally {
        millis[k] = (millis[k] ?? 0) + performance.now() - t;
      }
    },
    server: inner.server,
    stream(req: HttpRequest, onLine: (line: string) => void): Promise<StreamHandle> {
      return inner.stream(req, onLine);
    },
    close: () => inner.close(),
  };
  const reset = () => {
    for (const k of Object.keys(counts)) delete counts[k];
    for (const k of Object.keys(millis)) delete millis[k];
    for (const k of Object.keys(statusReasons)) delete statusReasons[k];
  };
  return { client: new KubeClient(transport), counts, millis, statusReasons, reset };
}

/** The engine reason a RayService status write carries (to tell which waits cost writes). */
function statusReason(body: string | undefined): string {
  try {
    const status = (JSON.parse(body ?? '{}') as { status?: { engineState?: { reason?: string; phase?: string } } }).status;
    return `${status?.engineState?.phase ?? '?'}/${status?.engineState?.reason ?? '?'}`;
  } catch {
    return 'unparsed';
  }
}

/** `rayclusters`, `rayservices/status`, `httproutes` … from an API path (list vs get: `rayclusters[]`). */
function resourceOf(path: string): string {
  const p = path.split('?')[0].split('/').filter(Boolean);
  const i = p.indexOf('namespaces');
  if (i < 0) return p[p.length - 1] ?? path;
  const rest = p.slice(i + 2);
  if (rest.length === 1) return `${rest[0]}[]`;
  return rest.length >= 3 ? `${rest[0]}/${rest[2]}` : rest[0];
}

/** `a 3, b 2` for a record of counts, largest first. */
export function formatCounts(c: RequestCounts): string {
  return Object.entries(c).sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ${n}`).join(', ');
}

/** CPU seconds (user + system) of the processes whose command line mentions `needle` (the control plane's folder). */
export function cpuSecondsOf(needle: string): number {
  let ticks = 0;
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (!fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(needle)) continue;
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(f[11]) + Number(f[12]); // utime, stime
    } catch {
      // gone
    }
  }
  return ticks / 100; // USER_HZ
}

/** Totals of request counts: reads, writes, lists. */
export function summarizeCounts(c: RequestCounts): { reads: number; lists: number; writes: number } {
  let reads = 0;
  let lists = 0;
  let writes = 0;
  for (const [k, n] of Object.entries(c)) {
    if (k.startsWith('GET ')) {
      reads += n;
      if (k.endsWith('[]')) lists += n;
    } else writes += n;
  }
  return { reads, lists, writes };
}

/** One traffic step seen by the recorder. */
export interface Step {
  readonly service: string;
  readonly pendingCluster: string;
  readonly weight: number;
  /**
   * The stored status just before was itself a traffic step of this upgrade, with the same target
   * capacities: capacity was ready already, so this step waited only for the interval (timed).
   */
  readonly followsStep: boolean;
  /** Due time: lastTrafficMigratedTime of the previous step + interval (undefined: first step ever). */
  readonly due?: number;
  /** Engine's decision time (the status' lastProgressTime). */
  readonly decidedAt: number;
  /** When the bench's route watch saw the weight (undefined until seen). */
  landedAt?: number;
}

interface RouteChange {
  at: number;
  weights: Map<string, number>;
}

/** Watches RayServices and HTTPRoutes in all namespaces and derives traffic steps and their lateness. */
export class StepRecorder {
  readonly steps: Step[] = [];
  /** Status writes seen per service (RayService status updates). */
  statusEvents = 0;
  /** Services of the target-capacity moves seen (either cluster): the migration's other kind of step. */
  private readonly capacityMoves: string[] = [];
  private readonly last = new Map<string, Record<string, any>>();
  /** The status of each service's latest traffic step. */
  private readonly stepped = new Map<string, Record<string, any>>();
  private readonly routes = new Map<string, RouteChange[]>();
  private readonly informers: Informer[] = [];
  private readonly listeners = new Set<() => void>();

  constructor(
    client: KubeClient,
    /** Interval (s) of a service `ns/name`. */
    private readonly intervalOf: (key: string) => number | undefined,
  ) {
    this.informers.push(
      client.watch({ apiVersion: 'rayshift.dev/v1alpha1', kind: 'RayService', plural: 'rayservices', namespaced: true }, '*', (e) => {
        if (e.type === 'delete') return;
        this.onService(`${e.object.metadata.namespace}/${e.object.metadata.name}`, (e.object.status as { engineState?: Record<string, any> } | undefined)?.engineState);
      }, { resyncIntervalMs: 0 }),
      client.watch({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', plural: 'httproutes', namespaced: true }, '*', (e) => {
        if (e.type === 'delete') return;
        const name = String(e.object.metadata.name);
        if (!name.endsWith('-httproute')) return;
        const rule = ((e.object.spec as { rules?: { backendRefs?: { name: string; weight?: number }[] }[] }).rules ?? [])[0];
        const weights = new Map((rule?.backendRefs ?? []).map((b) => [b.name, b.weight ?? 1] as [string, number]));
        this.onRoute(`${e.object.metadata.namespace}/${name.slice(0, -'-httproute'.length)}`, weights);
      }, { resyncIntervalMs: 0 }),
    );
  }

  async start(): Promise<void> {
    await Promise.all(this.informers.map((i) => i.waitForSync()));
  }

  async stop(): Promise<void> {
    await Promise.all(this.informers.map((i) => i.stop()));
  }

  /** True once the bench has seen the service's HTTPRoute. */
  hasRoute(key: string): boolean {
    return this.routes.has(key);
  }

  /** The newest engine state of a service. */
  state(key: string): Record<string, any> | undefined {
    return this.last.get(key);
  }

  /** Resolves when `check` holds (re-checked on every event and every `everyMs`). */
  until(check: () => boolean, what: string, timeoutMs: number, everyMs = 250): Promise<void> {
    return new Promise((resolve, reject) => {
      const listener = () => {
        if (!check()) return;
        done();
        resolve();
      };
      const timer = setInterval(listener, everyMs);
      const deadline = setTimeout(() => {
        done();
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      const done = () => {
        clearInterval(timer);
        clearTimeout(deadline);
        this.listeners.delete(listener);
      };
      this.listeners.add(listener);
      listener();
    });
  }

  /** Target-capacity moves of services whose key starts with `prefix`. */
  capacityStepsOf(prefix: string): number {
    return this.capacityMoves.filter((k) => k.startsWith(prefix)).length;
  }

  /** Steps of services whose key starts with `prefix` (a namespace + '/'). */
  stepsOf(prefix: string): Step[] {
    return this.steps.filter((s) => s.service.startsWith(prefix));
  }

  private onService(key: string, es: Record<string, any> | undefined): void {
    if (!es) return;
    this.statusEvents++;
    const prev = this.last.get(key);
    this.last.set(key, es);
    const sameCapacities = prev !== undefined && es.activeTargetCapacity === prev.activeTargetCapacity && es.pendingTargetCapacity === prev.pendingTargetCapacity;
    if (prev && es.pendingClusterName !== undefined && es.pendingClusterName === prev.pendingClusterName && !sameCapacities) this.capacityMoves.push(key);
    if (prev && es.pendingClusterName !== undefined && es.pendingClusterName === prev.pendingClusterName && es.pendingWeight !== prev.pendingWeight && es.trafficConfirmed === false) {
      const interval = this.intervalOf(key);
      const ltmt = es.lastTrafficMigratedTime as number | undefined;
      const step: Step = {
        service: key,
        pendingCluster: es.pendingClusterName,
        weight: es.pendingWeight,
        followsStep: sameCapacities && prev.trafficConfirmed === false && this.stepped.get(key) === prev,
        due: ltmt !== undefined && interval !== undefined ? ltmt + interval * 1000 : undefined,
        decidedAt: es.lastProgressTime,
      };
      this.steps.push(step);
      this.stepped.set(key, es);
      this.match(step);
    }
    this.notify();
  }

  private onRoute(key: string, weights: Map<string, number>): void {
    const list = this.routes.get(key) ?? [];
    const prev = list[list.length - 1];
    if (prev && prev.weights.size === weights.size && [...weights].every(([n, w]) => prev.weights.get(n) === w)) return;
    list.push({ at: Date.now(), weights });
    this.routes.set(key, list);
    for (const s of this.steps) if (s.service === key && s.landedAt === undefined) this.match(s);
    this.notify();
  }

  /** The first route change that put `step.weight` on the pending backend. */
  private match(step: Step): void {
    const list = this.routes.get(step.service) ?? [];
    const backend = `${step.pendingCluster}-serve-svc`;
    for (let i = 0; i < list.length; i++) {
      if (list[i].weights.get(backend) === step.weight && (i === 0 || list[i - 1].weights.get(backend) !== step.weight)) {
        step.landedAt = list[i].at;
        return;
      }
    }
  }

  private notify(): void {
    for (const l of [...this.listeners]) l();
  }
}

/** Lateness figures of a set of steps. */
export interface LatenessStats {
  readonly steps: number;
  readonly intervalBound: number;
  readonly unmatched: number;
  /** Write lateness (route seen − due) of interval-bound steps, ms. */
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  /** Decision lateness (engine decision − due) of interval-bound steps, ms. */
  readonly decideP50: number;
  readonly decideP99: number;
  /** Steps (all kinds) whose decision or landing preceded the due time. */
  readonly early: number;
  /** Smallest (landing − due) over all steps with a due time, ms (negative = early). */
  readonly minMargin: number;
}

/** Lateness statistics of `steps`. */
export function latenessStats(steps: readonly Step[]): LatenessStats {
  const bound = steps.filter((s) => s.followsStep && s.due !== undefined && s.landedAt !== undefined);
  const late = bound.map((s) => s.landedAt! - s.due!).sort((a, b) => a - b);
  const decide = bound.map((s) => s.decidedAt - s.due!).sort((a, b) => a - b);
  const withDue = steps.filter((s) => s.due !== undefined);
  const early = withDue.filter((s) => s.decidedAt < s.due! || (s.landedAt !== undefined && s.landedAt < s.due!)).length;
  const margins = withDue.filter((s) => s.landedAt !== undefined).map((s) => s.landedAt! - s.due!);
  return {
    steps: steps.length,
    intervalBound: bound.length,
    unmatched: steps.filter((s) => s.landedAt === undefined).length,
    p50: quantile(late, 0.5),
    p99: quantile(late, 0.99),
    max: late.length ? late[late.length - 1] : NaN,
    decideP50: quantile(decide, 0.5),
    decideP99: quantile(decide, 0.99),
    early,
    minMargin: margins.length ? Math.min(...margins) : NaN,
  };
}

/** Nearest-rank quantile of a sorted array. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/** A quantile of a prom-client histogram (`get()` output), as the upper bound of the bucket it falls in. */
export function histogramQuantile(metric: { values: { labels: Record<string, unknown>; value: number; metricName?: string }[] }, q: number): number {
  const buckets = metric.values
    .filter((v) => v.metricName?.endsWith('_bucket'))
    .map((v) => ({ le: v.labels.le === '+Inf' ? Infinity : Number(v.labels.le), n: v.value }))
    .sort((a, b) => a.le - b.le);
  const total = buckets.length ? buckets[buckets.length - 1].n : 0;
  if (total === 0) return NaN;
  const rank = q * total;
  for (const b of buckets) if (b.n >= rank) return b.le;
  return Infinity;
}

/** Count and sum of a prom-client histogram. */
export function histogramCountSum(metric: { values: { value: number; metricName?: string }[] }): { count: number; sum: number } {
  return {
    count: metric.values.find((v) => v.metricName?.endsWith('_count'))?.value ?? 0,
    sum: metric.values.find((v) => v.metricName?.endsWith('_sum'))?.value ?? 0,
  };
}

/** Prints rows as an aligned table. */
export function printTable(rows: readonly (readonly (string | number)[])[]): void {
  const cells = rows.map((r) => r.map((c) => (typeof c === 'number' ? fmt(c) : c)));
  const widths = cells[0].map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  for (const r of cells) console.log(r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  '));
}

/** A number for a table: integers as is, others with up to 1 decimal (2 below 10). */
export function fmt(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  if (Number.isInteger(n)) return String(n);
  return Math.abs(n) < 10 ? n.toFixed(2) : n.toFixed(1);
}

/** Runs `f` over `items` with at most `limit` in flight. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, f: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await f(items[i], i);
      }
    }),
  );
  return out;
}

/** Seconds since `t0`, for progress lines. */
export function since(t0: number): string {
  return `${((Date.now() - t0) / 1000).toFixed(1)}s`;
}
