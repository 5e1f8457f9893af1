/**
 * Sharding of the operator's work across its replicas (`rayshift operator --shards N`): every
 * RayService and RoleBasedGroup falls in one of `shards` shards by a hash of its namespace and
 * name (`shardOf`, lib/engine/shards.ts); each shard is held by one replica at a time through one
 * Lease, so capacity grows with replicas while no two replicas step the same service. The options,
 * their defaults and their checks.
 */
import { ProblemList, ValidationResult, show } from './problem';
import { isInteger } from './read';

/** Options of the operator's sharding. */
export interface ShardingOptions {
  /**
   * How many shards the services are hashed into; every replica must use the same count. More
   * shards than replicas lets the work move in smaller parts when a replica joins or leaves.
   * @default 1 (one Lease, one replica reconciling: leader election)
   */
  readonly shards?: number;
  /** How long a shard's or a member's Lease holds without renewal, seconds. @default 15 */
  readonly leaseDurationSeconds?: number;
  /** How often a replica renews its Leases and looks at the others', ms. @default 5000 */
  readonly renewMs?: number;
}

/** The defaults of `ShardingOptions`: client-go leader election's lease and renewal periods. */
export const SHARDING_DEFAULTS = { shards: 1, leaseDurationSeconds: 15, renewMs: 5000 } as const;

/** Most shards: each is one Lease every replica lists and one the holder renews every `renewMs`. */
export const MAX_SHARDS = 256;

/**
 * The checks of `ShardingOptions`: `shards` an integer from 1 to `MAX_SHARDS`, the lease duration
 * an integer from 2 to 3600 seconds, and the renewal period at most a third of it, so that two
 * renewals can fail before a shard is given up (client-go's default ratio of 10 s to 15 s leaves one).
 */
export function validateSharding(options: ShardingOptions): ValidationResult {
  const problems = new ProblemList();
  const { shards, leaseDurationSeconds, renewMs } = options;
  if (shards !== undefined && (!isInteger(shards) || shards < 1 || shards > MAX_SHARDS)) {
    problems.error('shards', `must be an integer from 1 to ${MAX_SHARDS}; got ${show(shards)}`);
  }
  if (leaseDurationSeconds !== undefined && (!isInteger(leaseDurationSeconds) || leaseDurationSeconds < 2 || leaseDurationSeconds > 3600)) {
    problems.error('leaseDurationSeconds', `must be an integer from 2 to 3600 (seconds); got ${show(leaseDurationSeconds)}`);
  }
  if (renewMs !== undefined && (!isInteger(renewMs) || renewMs < 100)) {
    problems.error('renewMs', `must be an integer of at least 100 (ms); got ${show(renewMs)}`);
  } else if (problems.ok) {
    const r = resolveSharding(options);
    if (r.renewMs * 3 > r.leaseDurationSeconds * 1000) {
      problems.error('renewMs', `must be at most a third of leaseDurationSeconds (${r.leaseDurationSeconds} s: at most ${Math.floor((r.leaseDurationSeconds * 1000) / 3)} ms), so a replica misses two renewals before it gives a shard up; got ${r.renewMs}`);
    }
  }
  return problems.result();
}

/** `ShardingOptions` with every default applied. */
export function resolveSharding(options: ShardingOptions): Required<ShardingOptions> {
  return {
    shards: options.shards ?? SHARDING_DEFAULTS.shards,
    leaseDurationSeconds: options.leaseDurationSeconds ?? SHARDING_DEFAULTS.leaseDurationSeconds,
    renewMs: options.renewMs ?? SHARDING_DEFAULTS.renewMs,
  };
}
