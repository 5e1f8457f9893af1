/**
 * AffinityScheduling batches (RBG's unmerged `copilot/update-role-based-group` design, whose batching
 * was left as future work there): `min(replicas/ratio)` batches, each co-locating `ratio` pods of
 * every role in one topology domain. Sequential mode places one batch per wave; Parallel places all
 * in one wave. Pods beyond the last full batch are reported as unbatched.
 */

/** A role with its co-location ratio. */
export interface AffinityRole {
  readonly name: string;
  readonly replicas: number;
  /** Pods of this role per batch, > 0. */
  readonly ratio: number;
}

/** How batches are placed. */
export type AffinityBatchMode = 'Sequential' | 'Parallel';

/** One batch: `pods[role]` pods per role, scheduled together. */
export interface AffinityBatch {
  readonly index: number;
  /** Batches of one wave are placed together; a wave starts when the previous one is placed. */
  readonly wave: number;
  readonly pods: Readonly<Record<string, number>>;
}

/** The batch sequence of an AffinityScheduling rule. */
export interface AffinityPlan {
  readonly batches: readonly AffinityBatch[];
  readonly waves: number;
  /** Pods per role left outside every batch (replicas not a multiple of the smallest batch count). */
  readonly unbatched: Readonly<Record<string, number>>;
}

/** Computes the batches; throws a `RangeError` for a ratio ≤ 0 or a non-integer count. */
export function affinityBatches(roles: readonly AffinityRole[], mode: AffinityBatchMode): AffinityPlan {
  for (const r of roles) {
    if (!Number.isInteger(r.ratio) || r.ratio <= 0) throw new RangeError(`ratios[${r.name}] is ${r.ratio}; allowed: an integer > 0`);
    if (!Number.isInteger(r.replicas) || r.replicas < 0) throw new RangeError(`roles[${r.name}].replicas is ${r.replicas}; allowed: an integer ≥ 0`);
  }
  const count = roles.length === 0 ? 0 : Math.min(...roles.map((r) => Math.floor(r.replicas / r.ratio)));
  const pods: Record<string, number> = {};
  const unbatched: Record<string, number> = {};
  for (const r of roles) {
    pods[r.name] = r.ratio;
    unbatched[r.name] = r.replicas - count * r.ratio;
  }
  const batches: AffinityBatch[] = [];
  for (let i = 0; i < count; i++) batches.push({ index: i, wave: mode === 'Sequential' ? i : 0, pods });
  return { batches, waves: count === 0 ? 0 : mode === 'Sequential' ? count : 1, unbatched };
}
