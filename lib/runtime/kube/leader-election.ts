/**
 * Leader election on a `coordination.k8s.io/v1` Lease, as client-go's leaderelection does:
 * acquire when the lease is free or expired, renew every `renewMs`, and give up (calling
 * `onLost`) when a renewal has not succeeded within the lease duration. Optimistic concurrency
 * on the Lease's resourceVersion makes two candidates' writes exclusive.
 */
import { leaseHeld } from '../../engine/shards';
import { KubeClient } from './client';
import { isNotFound } from './errors';
import { holdLease, leaseHolder, leaseView, releaseLease } from './lease-holder';
import { KnownTypes, KubeObject } from './types';

const LEASE = KnownTypes.Lease;

/** Options of `LeaderElector`. */
export interface LeaderElectionOptions {
  /** Lease namespace. */
  readonly namespace: string;
  /** Lease name. @default "rayshift-operator" */
  readonly name?: string;
  /** This candidate's identity (pod name). */
  readonly identity: string;
  /** Lease duration, seconds. @default 15 */
  readonly leaseDurationSeconds?: number;
  /** Renewal period, ms. @default 5000 */
  readonly renewMs?: number;
  /** Retry period while not leading, ms. @default 2000 */
  readonly retryMs?: number;
}

/** See the file comment. */
export class LeaderElector {
  private timer: NodeJS.Timeout | undefined;
  private leading = false;
  private lastRenew = 0;
  private stopped = false;
  private attemptCount = 0;
  private readonly name: string;
  private readonly duration: number;

  constructor(
    private readonly client: KubeClient,
    private readonly options: LeaderElectionOptions,
  ) {
    this.name = options.name ?? 'rayshift-operator';
    this.duration = options.leaseDurationSeconds ?? 15;
  }

  /** Whether this candidate holds the lease. */
  get isLeader(): boolean {
    return this.leading;
  }

  /** Acquire-or-renew attempts made so far, successful or not (a waiting candidate's count rises every `retryMs`). */
  get attempts(): number {
    return this.attemptCount;
  }

  /** Campaigns until leading (resolves then); `onLost` is called if leadership is lost later. */
  run(onLost: () => void): Promise<void> {
    return new Promise((resolve) => {
      const attempt = async () => {
        if (this.stopped) return;
        const ok = await this.tryAcquireOrRenew().catch(() => false);
        this.attemptCount++;
        const now = Date.now();
        if (ok) {
          this.lastRenew = now;
          if (!this.leading) {
            this.leading = true;
            resolve();
          }
        } else if (this.leading && now - this.lastRenew > this.duration * 1000) {
          this.leading = false;
          onLost();
          return;
        }
        this.timer = setTimeout(attempt, this.leading ? this.options.renewMs ?? 5000 : this.options.retryMs ?? 2000);
      };
      void attempt();
    });
  }

  /**
   * Stops campaigning and renewing without releasing the lease, as a crashed process would: a
   * successor takes the lease once it expires. For a process that can no longer trust its API
   * connection; `release` is the clean hand-over.
   */
  abandon(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  /** Stops campaigning and releases the lease if held, so a successor need not wait for expiry. */
  async release(): Promise<void> {
    this.abandon();
    if (!this.leading) return;
    this.leading = false;
    const lease = await this.client.tryGet(LEASE, this.name, this.options.namespace);
    if (lease && leaseHolder(lease) === this.options.identity) await releaseLease(this.client, lease).catch(() => undefined);
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const now = Date.now();
    let lease: KubeObject | undefined;
    try {
      lease = await this.client.tryGet(LEASE, this.name, this.options.namespace);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    // Another candidate's Lease is taken only once it expired.
    if (lease && leaseHolder(lease) !== this.options.identity && leaseHeld(leaseView(lease, this.duration), now)) return false;
    return holdLease(this.client, lease, { namespace: this.options.namespace, name: this.name, identity: this.options.identity, durationSeconds: this.duration }, now);
  }
}
