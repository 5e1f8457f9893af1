/**
 * Where a Node process's CPU went, by cause: reads a V8 `.cpuprofile` (`node --cpu-prof`) and
 * charges every sample to one cause by the frames of its stack (leaf first: the innermost frame
 * that names a cause wins, so JSON.parse under the watch stream counts as watch decoding and a
 * status write's HTTP request as a write). Used by `vs-kuberay.bench.ts --profile`; also runnable
 * alone: `npx tsx bench/cpu-profile-causes.ts <file.cpuprofile>`. Not a benchmark itself.
 */
import * as fs from 'node:fs';

/** The parts of a `.cpuprofile` this reads. */
interface CpuProfile {
  readonly nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }[];
  /** Microseconds, V8's monotonic clock. */
  readonly startTime: number;
  readonly endTime: number;
  readonly samples: number[];
  readonly timeDeltas: number[];
}

/** True when the script `url` is the module `path` (without extension), built (.js) or run by tsx (.ts). */
const script = (url: string, path: string) => url.includes(`${path}.js`) || url.includes(`${path}.ts`);

/** A cause and the rule that recognises one of its frames (by script path and function name). */
interface CauseRule {
  readonly cause: string;
  /** `caller`: the frame's caller (the next frame toward the root), as `url` and function name. */
  readonly match: (url: string, fn: string, caller: { url: string; fn: string }) => boolean;
}

/**
 * Causes, checked for each frame from the leaf up; the first frame some rule matches decides.
 * Order matters only within one frame (a frame matches at most one rule in practice).
 */
const RULES: readonly CauseRule[] = [
  { cause: 'logging (pino)', match: (u) => /node_modules\/(pino|sonic-boom|thread-stream|fast-redact)/.test(u) },
  { cause: 'metrics (prom-client)', match: (u) => /node_modules\/prom-client/.test(u) || script(u, '/operator/metrics') },
  { cause: 'Events', match: (u) => script(u, '/lib/runtime/kube/events') },
  { cause: 'status comparison and hashing (canonicalJson)', match: (u) => script(u, '/lib/spec/canonical-json') },
  { cause: 'validation and options (lib/spec)', match: (u) => u.includes('/lib/spec/') },
  { cause: 'Serve capacity polling', match: (u) => u.includes('/lib/runtime/serve/') || script(u, '/lib/runtime/capacity') },
  { cause: 'status rendering', match: (u) => script(u, '/lib/runtime/rayservice/status') || script(u, '/lib/runtime/rayservice/progress') },
  { cause: 'engine (lib/engine)', match: (u) => u.includes('/lib/engine/') },
  // The transport's line splitter, and the client's line handler it calls (JSON.parse of the event).
  { cause: 'watch decoding', match: (u, f, c) => (script(u, '/lib/runtime/kube/transport') && f === 'deliver') || (script(u, '/lib/runtime/kube/client') && script(c.url, '/lib/runtime/kube/transport') && c.fn === 'deliver') },
  { cause: 'informer caches and event filters', match: (u) => u.includes('/lib/runtime/kube/informer') || script(u, '/lib/runtime/kube/object-reader') || script(u, '/operator/event-service') || script(u, '/operator/operator') },
  { cause: 'API requests (writes and reads)', match: (u) => script(u, '/lib/runtime/kube/transport') || script(u, '/lib/runtime/kube/client') || script(u, '/lib/runtime/kube/retry') },
  { cause: 'reconcile (observe, execute, resources)', match: (u) => u.includes('/lib/runtime/rayservice/') || u.includes('/operator/') || u.includes('/lib/runtime/work-queue') },
];

const GC = '(garbage collector)';
const IDLE = '(idle)';

/** CPU ms by cause over samples taken within the wall-clock windows (ms since the epoch), or all. */
export interface CauseBreakdown {
  /** Cause → CPU ms (idle excluded). */
  readonly ms: Map<string, number>;
  /** Sampled CPU ms in the windows, idle excluded. */
  readonly totalMs: number;
  /** The heaviest self-time functions the rules left as "other", `fn url:line` → ms (to refine the rules). */
  readonly otherTop: [string, number][];
}

/**
 * Charges the samples of `file` to causes. `exitedAt` (wall ms) is when the profiled process ended,
 * which maps V8's monotonic clock onto wall time (the profile ends at exit); `windows` then keeps
 * only samples inside one of them.
 */
export function causesOf(file: string, exitedAt?: number, windows?: readonly { from: number; to: number }[]): CauseBreakdown {
  const p = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const causeOfNode = new Map<number, string>();
  const causeOf = (id: number): string => {
    const known = causeOfNode.get(id);
    if (known !== undefined) return known;
    const leaf = byId.get(id)!.callFrame;
    let cause: string | undefined;
    if (leaf.functionName === '(garbage collector)') cause = GC;
    else if (leaf.functionName === '(idle)') cause = IDLE;
    else if (leaf.functionName === '(program)') cause = '(program: V8/native outside JS)';
    for (let at: number | undefined = id; cause === undefined && at !== undefined; at = parent.get(at)) {
      const f = byId.get(at)!.callFrame;
      const up = parent.get(at);
      const c = up === undefined ? { url: '', fn: '' } : { url: byId.get(up)!.callFrame.url, fn: byId.get(up)!.callFrame.functionName };
      cause = RULES.find((r) => r.match(f.url, f.functionName, c))?.cause;
    }
    cause ??= 'other (node internals, libraries)';
    causeOfNode.set(id, cause);
    return cause;
  };
  const ms = new Map<string, number>();
  const other = new Map<string, number>();
  const offset = exitedAt !== undefined ? exitedAt - p.endTime / 1000 : 0; // wall ms = monotonic µs / 1000 + offset
  let t = p.startTime;
  let total = 0;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i];
    // A sample's time is charged to it as the gap to the next one (the sampling interval).
    const dt = (i + 1 < p.timeDeltas.length ? p.timeDeltas[i + 1] : 0) / 1000;
    const wall = t / 1000 + offset;
    if (windows && exitedAt !== undefined && !windows.some((w) => wall >= w.from && wall <= w.to)) continue;
    const cause = causeOf(p.samples[i]);
    if (cause === IDLE) continue;
    total += dt;
    ms.set(cause, (ms.get(cause) ?? 0) + dt);
    if (cause.startsWith('other')) {
      const f = byId.get(p.samples[i])!.callFrame;
      const k = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*node_modules\//, '').replace(/^.*\/build\//, '')}:${f.lineNumber + 1}`;
      other.set(k, (other.get(k) ?? 0) + dt);
    }
  }
  return { ms, totalMs: total, otherTop: [...other].sort((a, b) => b[1] - a[1]).slice(0, 8) };
}

/** Rows `cause, ms/step, share` of a breakdown, largest first. */
export function causeRows(b: CauseBreakdown, steps: number): (string | number)[][] {
  return [...b.ms].sort((x, y) => y[1] - x[1]).map(([cause, ms]) => [cause, ms / steps, `${((100 * ms) / Math.max(b.totalMs, 1e-9)).toFixed(1)} %`]);
}

if (require.main === module) {
  const file = process.argv[2];
  if (!file) throw new Error('usage: cpu-profile-causes.ts <file.cpuprofile>');
  const b = causesOf(file);
  for (const [cause, ms, share] of causeRows(b, 1)) console.log(`${String(cause).padEnd(45)} ${Number(ms).toFixed(0).padStart(8)} ms  ${share}`);
  console.log(`total ${b.totalMs.toFixed(0)} ms; heaviest "other": ${b.otherTop.map(([k, v]) => `${k} ${v.toFixed(0)} ms`).join('; ')}`);
}
