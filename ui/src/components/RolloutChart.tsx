/**
 * The rollout chart: both route weights and both target capacities over time as step lines, the
 * observed history solid and the plan's projection dashed, a marker per analysis verdict on the
 * weight its run measured, with a legend and a data table for screen readers (the verdicts' own
 * list is the analysis panel). The last observed point is also exposed as `data-*` attributes.
 */
import { isFailedPhase, type VerdictMark } from '../analysis';
import type { Sample } from '../model';
import { ColumnHeadings } from './small';

const W = 720;
const H = 260;
const M = { left: 44, right: 16, top: 14, bottom: 30 };
/** Shortest time window shown, ms. */
const MIN_WINDOW_MS = 30_000;

type Key = 'activeWeight' | 'pendingWeight' | 'activeCapacity' | 'pendingCapacity';

/** The four series: weights thick, capacities thin; active blue, pending orange. */
const SERIES: ReadonlyArray<{ key: Key; label: string; className: string }> = [
  { key: 'activeWeight', label: 'Active traffic weight', className: 'series-active weight' },
  { key: 'pendingWeight', label: 'Pending traffic weight', className: 'series-pending weight' },
  { key: 'activeCapacity', label: 'Active target capacity', className: 'series-active capacity' },
  { key: 'pendingCapacity', label: 'Pending target capacity', className: 'series-pending capacity' },
];

/** A step path through `points` (values hold until the next point), extended to `until`. */
function stepPath(points: readonly Sample[], key: Key, x: (t: number) => number, y: (v: number) => number, until?: number): string {
  if (points.length === 0) return '';
  let d = `M${x(points[0].at).toFixed(1)},${y(points[0][key]).toFixed(1)}`;
  for (const p of points.slice(1)) d += `H${x(p.at).toFixed(1)}V${y(p[key]).toFixed(1)}`;
  if (until !== undefined) d += `H${x(until).toFixed(1)}`;
  return d;
}

function clock(t: number): string {
  return new Date(t).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

/** Props of `RolloutChart`. */
export interface RolloutChartProps {
  readonly history: readonly Sample[];
  readonly projection: readonly Sample[];
  readonly now: number;
  /** Names of the clusters on each side now (exposed with the last point). */
  readonly clusters: { readonly active?: string; readonly pending?: string };
  /** Analysis verdicts; those within the time shown are marked. */
  readonly verdicts?: readonly VerdictMark[];
}

/** A verdict's shape at (x, y): a circle for a run that passed or was skipped, a diamond for one that did not (shape as well as colour). */
function VerdictShape({ phase, x, y }: { phase: string; x: number; y: number }) {
  return isFailedPhase(phase) ? <path d={`M${x.toFixed(1)},${(y - 7).toFixed(1)}l7,7l-7,7l-7,-7z`} /> : <circle cx={x.toFixed(1)} cy={y.toFixed(1)} r="5.5" />;
}

/** The chart. */
export function RolloutChart({ history, projection, now, clusters, verdicts = [] }: RolloutChartProps) {
  const last = history[history.length - 1];
  const end = Math.max(now, ...projection.map((p) => p.at));
  const start = Math.min(history[0]?.at ?? now, end - MIN_WINDOW_MS);
  const span = Math.max(1, end - start);
  const x = (t: number) => M.left + ((t - start) / span) * (W - M.left - M.right);
  const y = (v: number) => M.top + (1 - v / 100) * (H - M.top - M.bottom);
  const marks = verdicts.filter((m) => m.at >= start && m.at <= end);
  const phases = [...new Set(marks.map((m) => m.phase))];
  const ticks = Array.from({ length: 5 }, (_, i) => start + (span * i) / 4);
  const summary = last
    ? `Traffic: active ${last.activeWeight}%, pending ${last.pendingWeight}%. Target capacity: active ${last.activeCapacity}%, pending ${last.pendingCapacity}%.`
    : 'No data yet.';
  const newest = marks[marks.length - 1];
  const verdictSummary = newest ? ` ${marks.length} analysis verdict(s) marked, the newest: ${newest.label}.` : '';
  return (
    <figure class="chart">
      <svg
        viewBox={`0 0 ${W} ${H}`}
        role="img"
        aria-labelledby="chart-title chart-summary"
        data-testid="rollout-chart"
        data-samples={history.length}
        data-active-weight={last?.activeWeight}
        data-pending-weight={last?.pendingWeight}
        data-active-capacity={last?.activeCapacity}
        data-pending-capacity={last?.pendingCapacity}
        data-active-cluster={clusters.active}
        data-pending-cluster={clusters.pending}
        data-verdicts={marks.length}
      >
        <title id="chart-title">Traffic weights and target capacities over time</title>
        <desc id="chart-summary">{summary + verdictSummary}</desc>
        {[0, 25, 50, 75, 100].map((v) => (
          <g key={v} class="grid">
            <line x1={M.left} x2={W - M.right} y1={y(v)} y2={y(v)} />
            <text x={M.left - 6} y={y(v) + 4} text-anchor="end">{`${v}%`}</text>
          </g>
        ))}
        {ticks.map((t, i) => (
          <text key={t} class="tick" x={x(t)} y={H - 8} text-anchor={i === 0 ? 'start' : i === ticks.length - 1 ? 'end' : 'middle'}>
            {clock(t)}
          </text>
        ))}
        <line class="now" x1={x(now)} x2={x(now)} y1={M.top} y2={H - M.bottom} />
        {SERIES.map((s) => (
          <g key={s.key} class={s.className}>
            <path class="observed" d={stepPath(history, s.key, x, y, now)} />
            {projection.length > 1 && <path class="projected" d={stepPath(projection, s.key, x, y)} />}
          </g>
        ))}
        {marks.map((m) => (
          <g key={`${m.at}-${m.phase}`} class={`verdict verdict-${m.phase.toLowerCase()}`} data-phase={m.phase} data-weight={m.weight}>
            <VerdictShape phase={m.phase} x={x(m.at)} y={y(m.weight)} />
            <title>{`${m.label} at ${clock(m.at)}`}</title>
          </g>
        ))}
      </svg>
      <figcaption>
        <ul class="legend">
          {SERIES.map((s) => (
            <li key={s.key} class={s.className}>
              <svg viewBox="0 0 24 8" aria-hidden="true" width="24" height="8">
                <line x1="0" x2="24" y1="4" y2="4" />
              </svg>
              {s.label}
            </li>
          ))}
          <li class="legend-projection">
            <svg viewBox="0 0 24 8" aria-hidden="true" width="24" height="8">
              <line x1="0" x2="24" y1="4" y2="4" />
            </svg>
            Plan (projected)
          </li>
          {phases.map((phase) => (
            <li key={phase} class={`verdict verdict-${phase.toLowerCase()}`}>
              <svg viewBox="0 0 16 16" aria-hidden="true" width="12" height="12">
                <VerdictShape phase={phase} x={8} y={8} />
              </svg>
              Analysis {phase.toLowerCase()}
            </li>
          ))}
        </ul>
        <details>
          <summary>Data table</summary>
          <table>
            <caption>Observed splits, newest first</caption>
            <ColumnHeadings names={['Time', ...SERIES.map((s) => s.label)]} />
            <tbody>
              {[...history].reverse().slice(0, 50).map((p) => (
                <tr key={p.at}>
                  <th scope="row">{clock(p.at)}</th>
                  {SERIES.map((s) => (
                    <td key={s.key}>{`${p[s.key]}%`}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </details>
      </figcaption>
    </figure>
  );
}
