/**
 * TEST-ONLY: a simulated RBG controller (no kubelets here, so no pods). It plays the upstream RBG
 * controller's part for the rollout tests, against the real API server: it watches RoleBasedGroups
 * and, per role, moves replicas to the role's current template revision within what the role's
 * `rolloutStrategy.rollingUpdate` allows — never past `replicas − partition`, never with more than
 * `maxUnavailable` replicas not ready, nothing while `paused` — and reports the counts in
 * `status.roleStatuses` with `status.observedGeneration`, as RBG does. An updated replica becomes
 * ready after a per-role delay, or never for roles named by `neverReady`. Raising a partition
 * returns the replicas above it to the old revision at once. A group seen for the first time starts
 * with every replica on its current revision.
 */
import { resolveMaxUnavailable } from '../../lib/engine/from-spec';
import { KubeClient } from '../../lib/runtime/kube/client';
import { KubeObject } from '../../lib/runtime/kube/types';
import { RbgResourceType } from '../../lib/runtime/rbg/names';
import { roleRevision } from '../../lib/runtime/rbg/observe';
import { IntOrPercent, resolvePartition } from '../../lib/spec/percent';
import { JsonObject, asArray, asObject } from '../../lib/spec/read';

/** Options of the simulated RBG controller. */
export interface SimulatedRbgOptions {
  /** The RoleBasedGroup API version to watch. */
  readonly type: RbgResourceType;
  /** Time from a replica being updated to it being ready, ms. @default 15 */
  readonly readyDelayMs?: (group: string, role: string) => number;
  /** Roles whose updated replicas never become ready. */
  readonly neverReady?: (group: string, role: string) => boolean;
}

/** A running simulated RBG controller. */
export interface SimulatedRbgController {
  /** Stops the watch and the readiness timers. */
  stop(): Promise<void>;
}

interface RoleState {
  revision: string;
  updated: number;
  notReady: number;
}

/** TEST-ONLY: see the file comment. */
export function simulateRbgController(client: KubeClient, options: SimulatedRbgOptions): SimulatedRbgController {
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
    const roleStatuses = asArray(asObject(group.spec).roles).map((value) => {
      const role = asObject(value);
      const roleName = String(role.name);
      const state = advance(roles, role, key);
      const desired = replicasOf(role);
      return { name: roleName, replicas: desired, readyReplicas: desired - state.notReady, updatedReplicas: state.updated };
    });
    const status = { observedGeneration: group.metadata.generation, roleStatuses };
    const current = asObject(group.status);
    if (JSON.stringify({ observedGeneration: current.observedGeneration, roleStatuses: current.roleStatuses }) === JSON.stringify(status)) return;
    await client.patchMerge(options.type, name, namespace, { status }, { subresource: 'status' });
  };

  /** Moves one role's replicas as far as its rolling-update fields allow now. */
  const advance = (roles: Map<string, RoleState>, role: JsonObject, key: string): RoleState => {
    const group = key.split('/')[1];
    const roleName = String(role.name);
    const desired = replicasOf(role);
    const revision = roleRevision(role);
    let state = roles.get(roleName);
    if (!state) state = { revision, updated: desired, notReady: 0 };
    if (state.revision !== revision) state = { revision, updated: 0, notReady: 0 };
    roles.set(roleName, state);
    const ru = asObject(asObject(role.rolloutStrategy).rollingUpdate);
    const limit = desired - resolvePartition((ru.partition ?? 0) as IntOrPercent, desired);
    const maxUnavailable = resolveMaxUnavailable(ru.maxUnavailable as IntOrPercent | undefined, desired);
    state.updated = Math.min(state.updated, desired);
    if (ru.paused === true) return state;
    if (state.updated > limit) {
      state.updated = limit;
      state.notReady = Math.min(state.notReady, limit);
    }
    while (state.updated < limit && state.notReady < maxUnavailable) {
      state.updated++;
      state.notReady++;
      if (options.neverReady?.(group, roleName)) continue;
      const owner = state;
      const t = setTimeout(() => {
        timers.delete(t);
        owner.notReady = Math.max(0, owner.notReady - 1);
        schedule(key);
      }, options.readyDelayMs?.(group, roleName) ?? 15);
      timers.add(t);
    }
    return state;
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
