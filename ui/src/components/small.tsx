/** Small building blocks: the split sparkline, a percentage bar, the countdown, conditions, badges and table headings. */
import { useEffect, useState } from 'preact/hooks';
import type { UpgradeStatusJson } from '../api';
import { formatCountdown, phaseLabel, spokenCountdown, type Sample } from '../model';

/** The pending cluster's share of traffic over the samples seen, as a tiny area chart. */
export function Sparkline({ samples, label }: { samples: readonly Sample[]; label: string }) {
  const w = 96;
  const h = 24;
  const last = samples[samples.length - 1];
  if (!last) return <span class="muted">–</span>;
  const start = samples[0].at;
  const span = Math.max(1, last.at - start);
  const x = (t: number) => (samples.length === 1 ? 0 : ((t - start) / span) * w);
  const y = (v: number) => h - (v / 100) * h;
  let d = `M0,${h}V${y(samples[0].pendingWeight)}`;
  for (const s of samples.slice(1)) d += `H${x(s.at).toFixed(1)}V${y(s.pendingWeight).toFixed(1)}`;
  d += `H${w}V${h}Z`;
  return (
    <svg class="sparkline" viewBox={`0 0 ${w} ${h}`} width={w} height={h} role="img" aria-label={`${label}: ${last.activeWeight}% active, ${last.pendingWeight}% pending`}>
      <rect class="spark-active" x="0" y="0" width={w} height={h} />
      <path class="spark-pending" d={d} />
    </svg>
  );
}

/** A labelled horizontal bar filled to `value` of `max`. */
export function Bar({ value, max, label, className = '' }: { value: number; max: number; label: string; className?: string }) {
  const percent = max > 0 ? Math.max(0, Math.min(100, (value / max) * 100)) : 0;
  return (
    <div class={`bar ${className}`} role="meter" aria-label={label} aria-valuemin={0} aria-valuemax={max} aria-valuenow={value}>
      <div class="bar-fill" style={{ width: `${percent}%` }} />
    </div>
  );
}

/** The phase as a coloured badge with its words. */
export function PhaseBadge({ phase }: { phase: string | undefined }) {
  const cls = (phase ?? '').replace(/^UPGRADE_PHASE_/, '').toLowerCase();
  return <span class={`badge phase-${cls}`}>{phaseLabel(phase)}</span>;
}

/**
 * The time left until `due`, redrawn every 100 ms, plus a polite live region whose text (and so
 * what a screen reader announces) changes only every ten seconds or so.
 */
export function Countdown({ due }: { due: number | undefined }) {
  const [, setTick] = useState(0);
  useEffect(() => {
    if (due === undefined) return undefined;
    const t = setInterval(() => setTick((n) => n + 1), 100);
    return () => clearInterval(t);
  }, [due]);
  const left = due === undefined ? undefined : Math.max(0, due - Date.now());
  return (
    <div class="countdown">
      <h3 id="countdown-label">Next traffic step</h3>
      {left === undefined ? (
        <p class="muted" data-testid="countdown">
          none scheduled
        </p>
      ) : (
        <p>
          <span class="countdown-value" role="timer" aria-labelledby="countdown-label" data-testid="countdown" data-due={due}>
            {formatCountdown(left)}
          </span>{' '}
          <span class="muted">at {new Date(due!).toLocaleTimeString()}</span>
        </p>
      )}
      <p class="sr-only" aria-live="polite">
        {left === undefined ? '' : spokenCountdown(left)}
      </p>
    </div>
  );
}

/** A table's header row: one column heading per name, in order. */
export function ColumnHeadings({ names }: { names: readonly string[] }) {
  return (
    <thead>
      <tr>
        {names.map((n) => (
          <th scope="col" key={n}>
            {n}
          </th>
        ))}
      </tr>
    </thead>
  );
}

/** Conditions as a table. */
export function Conditions({ status }: { status: UpgradeStatusJson | undefined }) {
  const conditions = status?.conditions ?? [];
  if (conditions.length === 0) return <p class="muted">No conditions reported.</p>;
  return (
    <table class="conditions">
      <caption>Conditions</caption>
      <ColumnHeadings names={['Type', 'Status', 'Reason', 'Message', 'Since']} />
      <tbody>
        {conditions.map((c) => (
          <tr key={c.type}>
            <th scope="row">{c.type}</th>
            <td class={c.status === 'True' ? 'ok' : 'muted'}>{c.status}</td>
            <td>{c.reason}</td>
            <td>{c.message}</td>
            <td>{c.lastTransitionTime ? new Date(c.lastTransitionTime).toLocaleTimeString() : ''}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
