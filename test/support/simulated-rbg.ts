/**
 * TEST-ONLY: a simulated RBG controller for the RBG releases whose controller cannot be built here
 * (v0.6.0 and v0.8: the Go module proxy refuses `sigs.k8s.io/rbgs`, and ../shared/upstream holds
 * only v0.7.0's source, which the test cluster runs for real: test/support/cluster.ts). It plays
 * that controller's part for the rollout tests of those releases' APIs, against the real API
 * server: it watches RoleBasedGroups and, per role, moves replicas to the role's current template
 * revision within what the role's `rolloutStrategy.rollingUpdate` allows — never past
 * `replicas − partition`, never with more than `maxUnavailable` replicas not ready, nothing while
 * `paused` — and reports the counts in `status.roleStatuses` with `status.observedGeneration`, as
 * RBG does. An updated replica becomes ready after a per-role delay, or never for roles named by
 * `neverReady`. Raising a partition during a rollout returns the replicas above it to the old
 * revision at once, paused or not (what the executor's rollback rounds bring about on the real
 * releases: cluster-rbg-analysis.test.ts); once every replica is updated a raise returns nothing
 * (the executor's hold after a completed rollout). A group seen for the
 * first time starts with every replica on its current revision.
 *
 * With `workloads` (RBG ≥ v0.7's RoleInstanceSets) it also keeps each role's workload
 * `<group>-<role>`: its spec follows the role (replicas, rolling update, a template revision), its
 * status carries the true counts with `observedGeneration`, written before the group's status; and
 * a role's `roleStatuses` entry is rewritten only when its replicas or readyReplicas change, as RBG
 * does (docs/rbg-coordination.md), so the entry's updatedReplicas can be stale.
 */
import { createHash } from 'node:crypto';
import { KubeClient } from '../../lib/runtime/kube/client';
import { KubeObject, ResourceType } from '../../lib/runtime/kube/types';
import { RbgResourceType } from '../../lib/spec/object-names';

// The simulator's own reading of a group: written from RBG's API and Kubernetes' intstr rules, not
// from rayshift's (the executor under test must not be checked against its own arithmetic).
type JsonObject = Record<string, unknown>;
const asObject = (v: unknown): JsonObject => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as JsonObject) : {});
const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/**
 * Kubernetes' `intstr.GetScaledValueFromIntOrPercent`: an integer as is, `"N%"` as N % of `total`,
 * rounded up or down; anything else counts as 0 here (the API server's schema refuses it).
 */
export function scaledIntOrPercent(value: unknown, total: number, roundUp: boolean): number {
  if (typeof value === 'number') return value;
  const m = typeof value === 'string' ? /^(\d+)%$/.exec(value) : null;
  if (!m) return 0;
  const exact = (Number(m[1]) * total) / 100;
  return roundUp ? Math.ceil(exact) : Math.floor(exact);
}

/** The replicas a role's `partition` keeps on the old revision, as RBG's reconcilers scale it (rounded up), within 0…replicas. */
export function simulatedPartition(value: unknown, replicas: number): number {
  return Math.min(replicas, Math.max(0, scaledIntOrPercent(value ?? 0, replicas, true)));
}

/** Updated replicas that may be not ready at once: RBG's default 1, a percent rounded down, never below 1 (a rollout must move). */
export function simulatedMaxUnavailable(value: unknown, replicas: number): number {
  return value === undefined || value === null ? 1 : Math.max(1, scaledIntOrPercent(value, replicas, false));
}

/** The simulator's revision of a role's template: the role without `replicas` and `rolloutStrategy`, keys sorted, hashed. */
export function simulatedRoleRevision(role: JsonObject): string {
  const { replicas: _replicas, rolloutStrategy: _rollout, ...template } = role;
  const canonical = (v: unknown): unknown => (Array.isArray(v) ? v.map(canonical) : typeof v === 'object' && v !== null ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical((v as JsonObject)[k])])) : v);
  return createHash('sha1').update(JSON.stringify(canonical(template))).digest('hex').slice(0, 12);
}

/** Options of the simulated RBG controller. */
export interface SimulatedRbgOptions {
  /** The RoleBasedGroup API version to watch. */
  readonly type: RbgResourceType;
  /** Time from a replica being updated to it being ready, ms; 0: ready at once. @default 15 */
  readonly readyDelayMs?: (group: string, role: string) => number;
  /** Keep each role's workload of this type, and stale `roleStatuses` entries as RBG does (see the file comment). */
  readonly workloads?: ResourceType;
  /** Roles whose updated replicas never become ready. */
  readonly neverReady?: (group: string, role: string) => boolean;
}

/** A running simulated RBG controller. */
export interface SimulatedRbgController {
  /** Stops the watch and the readiness timers. */
  stop(): Promise<void>;
}

interface RoleState {
  /** The revision replicas are updated to (a StatefulSet's updateRevision). */
  revision: string;
  /**
   * Whether a raised partition returns updated replicas to an older revision. The raise stands for
   * what returns them on the real releases (v0.6.0: the executor deletes their Pods and the
   * StatefulSet recreates them below its partition at its current revision; v0.7.0: the executor
   * replaces them), which happens only in rollback rounds, and a rollback never starts from a
   * role entirely on the new revision. False once every replica is updated, so the executor's hold
   * after a completed rollout (partition = replicas for StatefulSets) returns nothing.
   */
  olderRevision: boolean;
  updated: number;
  notReady: number;
}

/** TEST-ONLY: see the file comment. */
export function simulateUnbuildableRbgRelease(client: KubeClient, options: SimulatedRbgOptions): SimulatedRbgController {
  const states = new Map<string, Map<string, RoleState>>();
  const timers = new Set<NodeJS.Timeout>();
  const running = new Map<string, Promise<void>>();
  const dirty = new Set<string>();
  let stopped = false;

  const schedule = (key: string) => {
    if (stopped) return;
    if (running.has(key)) {
      dirty.add(key);
      return;
    }
    const run = step(key)
      .catch(() => undefined)
      .finally(() => {
        running.delete(key);
        if (dirty.delete(key)) schedule(key);
      });
    running.set(key, run);
  };

  const step = async (key: string) => {
    const [namespace, name] = key.split('/');
    const group = informer.get(name, namespace);
    if (!group) return;
    const roles = states.get(key) ?? new Map<string, RoleState>();
    states.set(key, roles);
    const current = asObject(group.status);
    const previous = new Map(asArray(current.roleStatuses).map((e) => [asObject(e).name, asObject(e)]));
    const roleStatuses = [];
    for (const value of asArray(asObject(group.spec).roles)) {
      const role = asObject(value);
      const roleName = String(role.name);
      const state = advance(roles, role, key);
      const desired = replicasOf(role);
      const entry = { name: roleName, replicas: desired, readyReplicas: desired - state.notReady, updatedReplicas: state.updated };
      if (!options.workloads) {
        roleStatuses.push(entry);
        continue;
      }
      await syncWorkload(options.workloads, namespace, `${name}-${roleName}`, role, entry);
      const before = previous.get(roleName);
      roleStatuses.push(before && before.replicas === entry.replicas && before.readyReplicas === entry.readyReplicas ? before : entry);
    }
    const status = { observedGeneration: group.metadata.generation, roleStatuses };
    if (JSON.stringify({ observedGeneration: current.observedGeneration, roleStatuses: current.roleStatuses }) === JSON.stringify(status)) return;
    await client.patchMerge(options.type, name, namespace, { status }, { subresource: 'status' });
  };

  /** Moves one role's replicas as far as its rolling-update fields allow now. */
  const advance = (roles: Map<string, RoleState>, role: JsonObject, key: string): RoleState => {
    const group = key.split('/')[1];
    const roleName = String(role.name);
    const desired = replicasOf(role);
    const revision = simulatedRoleRevision(role);
    let state = roles.get(roleName);
    if (!state) state = { revision, olderRevision: false, updated: desired, notReady: 0 };
    if (state.revision !== revision) state = { revision, olderRevision: true, updated: 0, notReady: 0 };
    roles.set(roleName, state);
    const ru = asObject(asObject(role.rolloutStrategy).rollingUpdate);
    const limit = desired - simulatedPartition(ru.partition, desired);
    const maxUnavailable = simulatedMaxUnavailable(ru.maxUnavailable, desired);
    state.updated = Math.min(state.updated, desired);
    if (state.updated === desired) state.olderRevision = false;
    // A raised partition returns replicas even while paused (a rollback round writes it paused).
    if (state.olderRevision && state.updated > limit) {
      state.updated = limit;
      state.notReady = Math.min(state.notReady, limit);
    }
    if (ru.paused === true) return state;
    const never = options.neverReady?.(group, roleName) ?? false;
    const delay = options.readyDelayMs?.(group, roleName) ?? 15;
    const instant = delay === 0 && !never;
    while (state.updated < limit && (instant || state.notReady < maxUnavailable)) {
      state.updated++;
      if (instant) continue;
      state.notReady++;
      if (never) continue;
      const owner = state;
      const t = setTimeout(() => {
        timers.delete(t);
        owner.notReady = Math.max(0, owner.notReady - 1);
        schedule(key);
      }, delay);
      timers.add(t);
    }
    return state;
  };

  /** What was last written to each workload (`namespace/name`): its spec and status, as JSON. */
  const workloadsWritten = new Map<string, { spec: string; generation: number; status: string }>();
  /** Creates or updates the role's workload spec, then writes its true counts as its status for the generation that spec got. */
  const syncWorkload = async (type: ResourceType, namespace: string, name: string, role: JsonObject, entry: { replicas: number; readyReplicas: number; updatedReplicas: number }) => {
    const key = `${namespace}/${name}`;
    const ru = asObject(asObject(role.rolloutStrategy).rollingUpdate);
    const spec = { replicas: entry.replicas, roleInstanceTemplate: { revision: simulatedRoleRevision(role) }, updateStrategy: { partition: ru.partition ?? null, maxUnavailable: ru.maxUnavailable ?? null, paused: ru.paused ?? null } };
    let last = workloadsWritten.get(key);
    if (!last || last.spec !== JSON.stringify(spec)) {
      const existing = await client.tryGet(type, name, namespace);
      const written = existing
        ? await client.patchMerge(type, name, namespace, { spec })
        : await client.create({ apiVersion: type.apiVersion, kind: type.kind, metadata: { name, namespace }, spec } as KubeObject);
      last = { spec: JSON.stringify(spec), generation: written.metadata.generation ?? 0, status: '' };
      workloadsWritten.set(key, last);
    }
    // Only updated replicas are ever not ready here, so the updated-and-ready count is the updated minus the not ready.
    const notReady = entry.replicas - entry.readyReplicas;
    const status = {
      observedGeneration: last.generation,
      replicas: entry.replicas,
      readyReplicas: entry.readyReplicas,
      availableReplicas: entry.readyReplicas,
      updatedReplicas: entry.updatedReplicas,
      updatedReadyReplicas: entry.updatedReplicas - notReady,
      currentReplicas: entry.replicas - entry.updatedReplicas,
    };
    if (last.status === JSON.stringify(status)) return;
    await client.patchMerge(type, name, namespace, { status }, { subresource: 'status' });
    last.status = JSON.stringify(status);
  };

  const informer = client.watch(options.type, '*', (event) => {
    const o: KubeObject = event.object;
    const key = `${o.metadata.namespace}/${o.metadata.name}`;
    if (event.type === 'delete') {
      states.delete(key);
      return;
    }
    schedule(key);
  });

  return {
    async stop() {
      stopped = true;
      for (const t of timers) clearTimeout(t);
      informer.stop();
      await Promise.all([...running.values()]);
    },
  };
}

function replicasOf(role: JsonObject): number {
  return typeof role.replicas === 'number' ? role.replicas : 1;
}
