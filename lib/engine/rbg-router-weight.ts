/**
 * The weight rule of version-matched routing (a coordination rule's `router`): how much traffic the
 * new release's router may take. A request needs a prefill AND a decode of one release, so the new
 * release can serve no larger share than its slowest role holds: the weight is the smallest ready
 * new-release ratio over the routed roles, rounded down, and it moves only as replicas become ready.
 * When every routed replica runs the new release and is ready, the new router takes all traffic and
 * the old release's router goes; once no routed replica runs the old release, the new router takes
 * all traffic even while one of its replicas is briefly unready, as the old router has no worker left.
 * The same holds for one role alone: a request needs a pair, so once a routed role has no ready
 * replica left on the old release (decode all new while prefill still rolls), the old router can
 * serve nothing and the new one takes all traffic. A rollback takes the traffic back to the old
 * release before any replica is returned to it: its weight is 0 from the start.
 *
 * The route hold (`rbg-router-hold.ts`) keeps each routed role's last old replica while the route
 * still sends the old release a share; the rule lets it go: once every role whose round releases its
 * last old replica (`lastRound`) is down to that one with every other one new and ready, and every
 * routed role has a ready new replica, the new router takes all traffic (the old release keeps its
 * replicas until the route, as read, says so).
 */

/** A routed role (prefill or decode) as observed. */
export interface RoutedRole {
  readonly name: string;
  /** Replicas the role should run. */
  readonly desired: number;
  /** Replicas on the new release that are ready. */
  readonly readyUpdated: number;
  /** Replicas on the new release, ready or not. @default readyUpdated */
  readonly updated?: number;
  /** Replicas on the old release that are ready. @default desired − updated (every old replica ready) */
  readonly readyOld?: number;
  /**
   * The coordination's round releases the role's last old replica (partition 0), or would but for
   * the route hold (`rbg-router-hold.ts`). @default false
   */
  readonly lastRound?: boolean;
}

/** The route's split between the two releases' routers, percent. */
export interface RouterWeights {
  /** Weight of the new release's router, 0–100. */
  readonly newWeight: number;
  /** Weight of the old release's router, `100 − newWeight`. */
  readonly oldWeight: number;
  /** The old release's router is no longer needed (every routed replica is new and ready). */
  readonly removeOld: boolean;
}

/**
 * The weights while rolling forward (`rollingBack` false) or back. Forward: the new router's weight
 * is `min over roles of floor(100 · readyUpdated / desired)` (roles with no replicas do not count),
 * 100 with the old router removed once every role is fully new and ready, or fully new at all: a
 * share left to the old router then has no worker to serve it; 100 without removing the old router
 * while some role has no ready old replica (the old router has no pair to make), or while every
 * `lastRound` role is down to its last old replica with every other one new and ready and every role
 * has a ready new replica (the route hold's release). Back: 0 at once,
 * whatever is ready, so the old release serves everything before the first replica returns to it.
 */
export function routerWeights(roles: readonly RoutedRole[], rollingBack: boolean): RouterWeights {
  const counted = roles.filter((r) => r.desired > 0);
  for (const r of roles) {
    const updated = r.updated ?? r.readyUpdated;
    const counts = [r.desired, r.readyUpdated, updated, ...(r.readyOld === undefined ? [] : [r.readyOld])];
    if (!counts.every((n) => Number.isInteger(n) && n >= 0)) {
      throw new RangeError(`routed role ${r.name}: desired ${r.desired}, readyUpdated ${r.readyUpdated}, updated ${updated}${r.readyOld === undefined ? '' : `, readyOld ${r.readyOld}`}; allowed: integers ≥ 0`);
    }
  }
  if (rollingBack || counted.length === 0) return { newWeight: 0, oldWeight: 100, removeOld: false };
  if (counted.every((r) => (r.updated ?? r.readyUpdated) >= r.desired)) return { newWeight: 100, oldWeight: 0, removeOld: true };
  // A share sent to the old router while one of its roles has no ready replica could only fail
  // (sglang-router: "No decode workers available"); the new router may at least serve it.
  if (counted.some((r) => (r.readyOld ?? Math.max(0, r.desired - (r.updated ?? r.readyUpdated))) === 0)) return { newWeight: 100, oldWeight: 0, removeOld: false };
  // The held last replicas go only once the route has left the old release: a role down to its last
  // old replica, the others new and ready, and a complete new pair, so the new router can serve all.
  const last = counted.filter((r) => r.lastRound === true);
  const othersReady = last.every((r) => (r.updated ?? r.readyUpdated) >= r.desired - 1 && r.readyUpdated >= r.desired - 1);
  if (last.length > 0 && othersReady && counted.every((r) => r.readyUpdated >= 1)) return { newWeight: 100, oldWeight: 0, removeOld: false };
  // Integer division: the weight never rounds up past the share the slowest role can serve.
  const newWeight = Math.min(...counted.map((r) => Math.floor((100 * Math.min(r.readyUpdated, r.desired)) / r.desired)));
  const removeOld = counted.every((r) => r.readyUpdated >= r.desired);
  return { newWeight, oldWeight: 100 - newWeight, removeOld };
}

