/**
 * Which replica of the operator works on which service: the rules of sharding, pure. A service's
 * shard is a hash of its namespace and name (`shardOf`); the replicas alive (each renews a member
 * Lease) share the shards by rendezvous hashing (`desiredShards`), so a replica joining or leaving
 * moves only the shards it gains or loses; and a replica acts on a shard only while it holds the
 * shard's Lease (`shardMoves`), which makes a shard's holder unique even while two replicas see
 * different members. A holder that cannot renew stops working on a shard one renewal period
 * before anyone else may take it (`workUntil`).
 */

/** FNV-1a, 32 bits, of `text`'s UTF-16 code units: stable across processes, releases and platforms. */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** MurmurHash3's 32-bit finalizer: FNV-1a alone barely separates names that differ in their last characters (Pods of one Deployment). */
function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35) >>> 0;
  h ^= h >>> 16;
  return h >>> 0;
}

/** The shard (0 … shards − 1) of the object `namespace/name`. */
export function shardOf(namespace: string, name: string, shards: number): number {
  return shards <= 1 ? 0 : fnv1a(`${namespace}/${name}`) % shards;
}

/**
 * The shards `self` should hold among `members` (the replicas alive; `self` counts whether listed
 * or not): each shard goes to the member with the highest score of the member's name and the
 * shard (FNV-1a of the name mixed with the shard number), ties to the smaller name.
 */
export function desiredShards(members: readonly string[], self: string, shards: number): number[] {
  const all = members.includes(self) ? members : [...members, self];
  const mine: number[] = [];
  const named = all.map((m) => ({ m, h: fnv1a(m) }));
  for (let shard = 0; shard < shards; shard++) {
    const salt = Math.imul(shard + 1, 0x9e3779b1);
    let best = '';
    let bestScore = -1;
    for (const { m, h } of named) {
      const score = fmix32((h ^ salt) >>> 0);
      if (score > bestScore || (score === bestScore && m < best)) {
        best = m;
        bestScore = score;
      }
    }
    if (best === self) mine.push(shard);
  }
  return mine;
}

/** What a replica sees of one Lease (a shard's or a member's). */
export interface LeaseView {
  /** `spec.holderIdentity`; empty or unset when released. */
  readonly holder?: string;
  /** `spec.renewTime`, epoch ms. */
  readonly renewedAt?: number;
  /** `spec.leaseDurationSeconds`. */
  readonly durationSeconds: number;
}

/** Whether `lease` is held at `now`: a holder, renewed less than its duration ago. */
export function leaseHeld(lease: LeaseView | undefined, now: number): boolean {
  return lease !== undefined && !!lease.holder && lease.renewedAt !== undefined && lease.renewedAt + lease.durationSeconds * 1000 > now;
}

/** The replicas alive at `now`: the holders of the member Leases still held. */
export function liveMembers(memberLeases: readonly LeaseView[], now: number): string[] {
  return [...new Set(memberLeases.filter((l) => leaseHeld(l, now)).map((l) => l.holder!))].sort();
}

/** What a replica does with the shard Leases in one renewal. */
export interface ShardMoves {
  /** Shards it should hold whose Lease is free or expired: take them. */
  readonly acquire: number[];
  /** Shards it holds and should keep: renew them. */
  readonly renew: number[];
  /** Shards it holds that another member should have: finish their work, then release them. */
  readonly release: number[];
}

/**
 * The moves of `self` given the live `members` and the shard Leases by shard number (a missing
 * entry: no Lease yet). A shard another replica holds is never taken, even one `self` should have:
 * its holder releases it when it sees the same members, or its Lease expires.
 */
export function shardMoves(self: string, members: readonly string[], shardLeases: ReadonlyMap<number, LeaseView>, shards: number, now: number): ShardMoves {
  const desired = new Set(desiredShards(members, self, shards));
  const acquire: number[] = [];
  const renew: number[] = [];
  const release: number[] = [];
  for (let shard = 0; shard < shards; shard++) {
    const lease = shardLeases.get(shard);
    const mine = lease?.holder === self;
    if (mine) (desired.has(shard) ? renew : release).push(shard);
    else if (desired.has(shard) && !leaseHeld(lease, now)) acquire.push(shard);
  }
  return { acquire, renew, release };
}

/**
 * Until when a replica may work on a shard whose Lease it last renewed at `renewedAt`: one renewal
 * period before the Lease expires, so that its last reconcile ends before another replica may take
 * the shard (clocks that differ by less than `renewMs` keep the two apart).
 */
export function workUntil(renewedAt: number, durationSeconds: number, renewMs: number): number {
  return renewedAt + durationSeconds * 1000 - renewMs;
}

/**
 * The operator replica that works on an object, as its status shows it (`status.owner` of a
 * RayService, `owner` of a RoleBasedGroup's status document): the replica's identity (its Pod name)
 * and, when the operator is sharded, the object's shard.
 */
export interface ObjectOwner {
  readonly replica: string;
  readonly shard?: number;
}

/** The owner record stored at `value` (a status field), if it names a replica; a shard only when it is a non-negative integer. */
export function storedOwner(value: unknown): ObjectOwner | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { replica, shard } = value as Record<string, unknown>;
  if (typeof replica !== 'string') return undefined;
  return { replica, ...(typeof shard === 'number' && Number.isInteger(shard) && shard >= 0 ? { shard } : {}) };
}

/** The owner as status screens print it: `replica rayshift-operator-7d9f-x2k4p, shard 5`. */
export function describeOwner(owner: ObjectOwner): string {
  return `replica ${owner.replica}${owner.shard !== undefined ? `, shard ${owner.shard}` : ''}`;
}
