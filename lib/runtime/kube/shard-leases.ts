/**
 * The Leases of a sharded operator (`rayshift operator --shards N`), in the operator's namespace:
 * each replica renews a member Lease (`<prefix>-member-<identity>`) while it is alive, and holds
 * the shard Leases (`<prefix>-shard-<i>`) the engine gives it among the live members
 * (lib/engine/shards.ts). Every renewal is one list of the prefix's Leases (by label) and one
 * resourceVersion-guarded replace per Lease it writes, so two replicas never both take a shard. A
 * shard is given up in order: no new work (`owns` turns false), the work in flight drained
 * (`drain`), then the Lease released, so its next holder never steps a service this one is stepping.
 */
import { LeaseView, leaseHeld, liveMembers, shardMoves, workUntil } from '../../engine/shards';
import { LEASE_OF_LABEL, LEASE_ROLE_LABEL, SHARD_LABEL, memberLeaseName, shardLeaseName } from '../../spec/object-names';
import { KubeClient } from './client';
import { isConflict } from './errors';
import { holdLease, leaseHolder, leaseView, releaseLease } from './lease-holder';
import { KnownTypes, KubeObject } from './types';

const LEASE = KnownTypes.Lease;

/** Options of `ShardLeases` (resolved: lib/spec/sharding.ts holds the defaults and checks). */
export interface ShardLeasesOptions {
  /** Namespace of the Leases (the operator's). */
  readonly namespace: string;
  /** Prefix of the Leases' names (the operator's Lease name). */
  readonly prefix: string;
  /** This replica's identity (its Pod name). */
  readonly identity: string;
  /** Shard count; every replica must use the same. */
  readonly shards: number;
  /** Lease duration, seconds. */
  readonly leaseDurationSeconds: number;
  /** Renewal period, ms. */
  readonly renewMs: number;
  /** Called once this replica holds `shard`: queue the shard's objects. */
  readonly onAcquired: (shard: number) => void;
  /** Resolves once no work of `shard` is in flight (called after `owns(shard)` turned false, before the release). */
  readonly drain: (shard: number) => Promise<void>;
  /** Reports a renewal that failed (it is retried at the next period). */
  readonly onError?: (err: unknown) => void;
  /** The clock. @default Date.now */
  readonly now?: () => number;
}

/** See the file comment. */
export class ShardLeases {
  /** Local time each held shard's Lease was last renewed (taken before the write was sent). */
  private readonly renewed = new Map<number, number>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private running: Promise<void> = Promise.resolve();
  private readonly now: () => number;

  constructor(
    private readonly client: KubeClient,
    private readonly options: ShardLeasesOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  /** Whether this replica may work on `shard` now: it holds the Lease and its last renewal is recent enough. */
  owns(shard: number): boolean {
    const at = this.renewed.get(shard);
    return at !== undefined && this.now() < workUntil(at, this.options.leaseDurationSeconds, this.options.renewMs);
  }

  /** The shards this replica may work on now, ascending. */
  held(): number[] {
    return [...this.renewed.keys()].filter((s) => this.owns(s)).sort((a, b) => a - b);
  }

  /** Renews now and then every `renewMs`; resolves after the first renewal. */
  async start(): Promise<void> {
    await this.renewOnce();
  }

  /** One renewal: the member Lease, then the shard moves of the engine; the next is scheduled `renewMs` after it ends. */
  private renewOnce(): Promise<void> {
    this.running = this.running.then(() => this.renew()).catch((err) => this.options.onError?.(err));
    return this.running.finally(() => this.schedule());
  }

  /**
   * Stops renewing and releases every shard after draining it, then the member Lease: a clean
   * hand-over. An API server that cannot be reached leaves the Leases to expire (each shard is
   * drained all the same).
   */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
    const list = await this.list().catch((err) => {
      this.options.onError?.(err);
      return new Map<string, KubeObject>();
    });
    for (const shard of [...this.renewed.keys()].sort((x, y) => x - y)) await this.release(shard, list.get(shardLeaseName(this.options.prefix, shard)));
    const member = list.get(memberLeaseName(this.options.prefix, this.options.identity));
    if (member) await this.giveUp(member);
  }

  /** Stops renewing without releasing anything, as a crashed replica would: its shards move when their Leases expire. */
  abandon(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.renewed.clear();
  }

  private schedule(): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.renewOnce(), this.options.renewMs);
  }

  private async renew(): Promise<void> {
    if (this.stopped) return;
    const o = this.options;
    const leases = await this.list();
    const memberName = memberLeaseName(o.prefix, o.identity);
    const startedAt = this.now();
    await this.hold(memberName, { [LEASE_ROLE_LABEL]: 'member' }, leases.get(memberName));
    const members: LeaseView[] = [];
    const shardViews = new Map<number, LeaseView>();
    for (const lease of leases.values()) {
      const labels = lease.metadata.labels ?? {};
      if (labels[LEASE_ROLE_LABEL] === 'member') members.push(leaseView(lease, 1));
      else if (labels[LEASE_ROLE_LABEL] === 'shard') shardViews.set(Number(labels[SHARD_LABEL]), leaseView(lease, 1));
    }
    const moves = shardMoves(o.identity, liveMembers(members, startedAt), shardViews, o.shards, startedAt);
    for (const shard of moves.release) await this.release(shard, leases.get(shardLeaseName(o.prefix, shard)));
    for (const shard of [...moves.renew, ...moves.acquire]) {
      const name = shardLeaseName(o.prefix, shard);
      const at = this.now();
      const ok = await this.hold(name, { [LEASE_ROLE_LABEL]: 'shard', [SHARD_LABEL]: String(shard) }, leases.get(name));
      if (ok) {
        // Not owned until now (new, or renewed after a gap longer than workUntil's): its events were skipped, so its objects are queued.
        const owned = this.owns(shard);
        this.renewed.set(shard, at);
        if (!owned) o.onAcquired(shard);
      }
    }
    // A shard this replica held whose Lease another took (an expiry it did not notice in time) is no longer its.
    for (const shard of this.renewed.keys()) {
      const view = shardViews.get(shard);
      if (view && view.holder !== o.identity && leaseHeld(view, startedAt)) this.renewed.delete(shard);
    }
  }

  /** Takes or renews the Lease `name` (creating it with `labels`); false when another replica won the write. */
  private hold(name: string, labels: Record<string, string>, lease: KubeObject | undefined): Promise<boolean> {
    const o = this.options;
    return holdLease(this.client, lease, { namespace: o.namespace, name, identity: o.identity, durationSeconds: o.leaseDurationSeconds, labels: { [LEASE_OF_LABEL]: o.prefix, ...labels } }, this.now());
  }

  /** Gives `shard` up: no new work, the work in flight drained, then its Lease released (if still this replica's). */
  private async release(shard: number, lease: KubeObject | undefined): Promise<void> {
    this.renewed.delete(shard);
    await this.options.drain(shard);
    if (lease && leaseHolder(lease) === this.options.identity) await this.giveUp(lease);
  }

  /** Releases `lease` (holder cleared, expiring at once); one another replica wrote meanwhile is not its to release. */
  private async giveUp(lease: KubeObject): Promise<void> {
    await releaseLease(this.client, lease).catch((err) => {
      if (!isConflict(err)) this.options.onError?.(err);
    });
  }

  private async list(): Promise<Map<string, KubeObject>> {
    const list = await this.client.list(LEASE, { namespace: this.options.namespace, labelSelector: { [LEASE_OF_LABEL]: this.options.prefix } });
    return new Map(list.items.map((l) => [String(l.metadata.name), l]));
  }
}
