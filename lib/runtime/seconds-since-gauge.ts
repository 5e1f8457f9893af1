/**
 * A prom-client gauge of the seconds since a recorded time, per label set, computed at each scrape
 * from the clock it is given (0 for a label set recorded with no time): the surge gauges of
 * RayService upgrades (`rayshift_surge_unschedulable_seconds`) and of RoleBasedGroup rollouts
 * (`rayshift_rbg_surge_unschedulable_seconds`).
 */
import { Gauge, Registry } from 'prom-client';

/** See the file comment. */
export class SecondsSinceGauge<L extends string> {
  /** The registered gauge. */
  readonly gauge: Gauge<L>;
  /** Since when (epoch ms, 0: no time) per label set, by the labels' values in `labelNames` order. */
  private readonly since = new Map<string, { labels: Record<L, string>; since: number }>();

  constructor(name: string, help: string, private readonly labelNames: readonly L[], registry: Registry, now: () => number) {
    const since = this.since;
    this.gauge = new Gauge<L>({
      name,
      help,
      labelNames,
      registers: [registry],
      collect() {
        for (const s of since.values()) this.set(s.labels, s.since === 0 ? 0 : Math.max(0, (now() - s.since) / 1000));
      },
    });
  }

  /** Records `labels` since `since` (epoch ms), or with no time (the gauge reads 0) when undefined or not a number. */
  record(labels: Record<L, string>, since: number | undefined): void {
    this.since.set(this.key(labels), { labels, since: since !== undefined && Number.isFinite(since) ? since : 0 });
  }

  /** Drops `labels`' series. */
  remove(labels: Record<L, string>): void {
    this.since.delete(this.key(labels));
    this.gauge.remove(labels);
  }

  private key(labels: Record<L, string>): string {
    return JSON.stringify(this.labelNames.map((l) => labels[l]));
  }
}
