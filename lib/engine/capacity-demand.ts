/**
 * The inputs of the capacity preflight, read from Kubernetes objects as the API server returns
 * them: what an upgrade's new RayCluster requests first (`upgradeDemand`) or what a RoleBasedGroup
 * round moves to its roles' new templates (`rbgRoundPreflight`), and what the cluster has
 * (`capacityPictureOf`: nodes, bound Pods, ResourceQuotas). The executor lists the objects; every
 * rule of reading them (LimitRange defaults, init containers, which Pods the old cluster or the
 * round gives back) is here.
 */
import { parseQuantityMilli } from '../spec/quantity';
import { clusterShape } from '../spec/raycluster';
import { asArray, asObject, isObject, type JsonObject } from '../spec/read';
import type { ResolvedUpgradeOptions } from '../spec/rayservice';
import { CLUSTER_LABEL, ordinalOf, rbgPodLabels, rbgWorkloadName } from '../spec/object-names';
import { roleReplicas } from '../spec/rbg-releases';
import { replicaPods, roleReplicasUnordered, roleShape } from '../spec/rbg-shape';
import { capacityPreflight, type BoundPod, type CapacityNode, type CapacityPicture, type CapacityVerdict, type NodeRequirement, type NodeTerm, type PodGroupDemand, type PodPlacement, type PodToleration, type QuotaUsage, type ResourceAmounts } from './capacity-preflight';

/** The objects the executor lists for a preflight, as the API server returned them. */
export interface ListedCapacity {
  /** Every Node. */
  readonly nodes: readonly unknown[];
  /** Every Pod bound to a node (`spec.nodeName!=`), in every namespace. */
  readonly pods: readonly unknown[];
  /** The namespace's ResourceQuotas (the RayService's, the RoleBasedGroup's). */
  readonly quotas: readonly unknown[];
  /** The namespace's LimitRanges. */
  readonly limitRanges: readonly unknown[];
}

/**
 * The preflight of an upgrade to `cluster` (the goal RayCluster spec) while `activeCluster` serves,
 * over what the executor listed. Undefined when no Node is visible: there is nothing to judge
 * (an API server without nodes, or one that hides them), and the upgrade starts as it always did.
 */
export function preflightUpgrade(cluster: unknown, opts: Pick<ResolvedUpgradeOptions, 'strategy' | 'maxSurgePercent'>, listed: ListedCapacity, activeCluster: string | undefined): CapacityVerdict | undefined {
  if (listed.nodes.length === 0) return undefined;
  const old = (p: JsonObject) => activeCluster !== undefined && asObject(asObject(p.metadata).labels)[CLUSTER_LABEL] === activeCluster;
  return capacityPreflight(upgradeDemand(cluster, opts, listed.limitRanges), capacityPictureOf(listed.nodes, listed.pods, listed.quotas, old));
}

/**
 * The preflight of a RoleBasedGroup round that lowers each role `partitions` names to its partition
 * there, `group` being the group as read (its templates are the new revision's), over what the
 * executor listed. Such a role moves its replicas from that partition up to its `replicas`: the
 * demand is their Pods of its template now (`replicaPods`, LimitRange defaults applied), named
 * `<role>` (`<role>/<component>` for a components role). The Pods at those ordinals (RBG names a
 * replica's Pods `<group>-<role>-<ordinal>`, with a suffix for a multi-Pod replica; found by RBG's
 * group and role labels) are releasable: a coordinated role has no `maxSurge`, so RBG takes a
 * replica's old Pod down before its successor is created, or updates it in place. A role that sets
 * one all the same (validation refuses it, a hand-written group may not have been validated) frees
 * nothing, since RBG may create its surge first. A Stateless RoleInstanceSet's replicas have no
 * ordinals (`roleReplicasUnordered`; rayshift renders routed roles so) and its controller picks which
 * to replace: as many of the role's Pods as the round moves replicas are releasable, the first by
 * name; the scheduler watch still sees a pick that places differently. Undefined when no Node is visible.
 */
export function rbgRoundPreflight(group: unknown, partitions: ReadonlyMap<string, number>, listed: ListedCapacity): CapacityVerdict | undefined {
  if (listed.nodes.length === 0) return undefined;
  const g = asObject(group);
  const name = String(asObject(g.metadata).name);
  const namespace = asObject(g.metadata).namespace;
  const labels = rbgPodLabels(g);
  /** The replicas whose old Pods the round frees, by role: by ordinal, or (`count` Pods) by name. */
  const moved = new Map<string, { from: number; to: number; unordered?: { count: number } }>();
  const demand: PodGroupDemand[] = [];
  for (const role of asArray(asObject(g.spec).roles).map(asObject)) {
    const from = partitions.get(String(role.name));
    const to = roleReplicas(role);
    if (from === undefined || from >= to) continue;
    const shape = roleShape(role, g);
    if (shape.maxSurge === 0) moved.set(String(role.name), { from, to, ...(roleReplicasUnordered(role, g) ? { unordered: { count: (to - from) * shape.podsPerReplica } } : {}) });
    for (const p of replicaPods(role, g)) {
      const named = p.component === undefined ? String(role.name) : `${String(role.name)}/${p.component}`;
      demand.push({ name: named, pods: (to - from) * p.pods, requests: podRequests(p.template, listed.limitRanges), placement: podPlacement(p.template) });
    }
  }
  const roleOf = (p: JsonObject) => {
    const meta = asObject(p.metadata);
    const podLabels = asObject(meta.labels);
    return meta.namespace === namespace && podLabels[labels.group] === name ? String(podLabels[labels.role]) : undefined;
  };
  // An unordered role's releasable Pods: its first live ones by name, as many as the round moves.
  const byName = new Set<string>();
  for (const [role, range] of moved) {
    if (range.unordered === undefined) continue;
    const mine = listed.pods.map(asObject).filter((p) => roleOf(p) === role && asObject(p.metadata).deletionTimestamp === undefined).map((p) => String(asObject(p.metadata).name)).sort();
    for (const n of mine.slice(0, range.unordered.count)) byName.add(n);
  }
  const released = (p: JsonObject) => {
    const role = roleOf(p);
    const range = role === undefined ? undefined : moved.get(role);
    if (role === undefined || range === undefined) return false;
    if (range.unordered !== undefined) return byName.has(String(asObject(p.metadata).name));
    const ordinal = ordinalOf(rbgWorkloadName(name, role), asObject(p.metadata).name, true);
    return ordinal !== undefined && ordinal >= range.from && ordinal < range.to;
  };
  return capacityPreflight(demand, capacityPictureOf(listed.nodes, listed.pods, listed.quotas, released));
}

/** A LimitRange's `type: Container` defaults, as Kubernetes' LimitRanger applies them at admission. */
interface ContainerDefaults {
  readonly requests: Record<string, number>;
  readonly limits: Record<string, number>;
}

/** Milli-unit amounts of a `{resource: quantity}` map; entries that are not quantities are skipped. */
function amounts(list: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [r, q] of Object.entries(asObject(list))) {
    const v = parseQuantityMilli(q);
    if (v !== undefined) out[r] = v;
  }
  return out;
}

/** The merged `type: Container` defaults of the namespace's LimitRanges (the first LimitRange setting a resource wins). */
function containerDefaults(limitRanges: readonly unknown[]): ContainerDefaults {
  const requests: Record<string, number> = {};
  const limits: Record<string, number> = {};
  for (const lr of limitRanges) {
    for (const item of asArray(asObject(asObject(lr).spec).limits).map(asObject)) {
      if (item.type !== 'Container') continue;
      for (const [r, v] of Object.entries(amounts(item.defaultRequest))) requests[r] ??= v;
      for (const [r, v] of Object.entries(amounts(item.default))) limits[r] ??= v;
    }
  }
  return { requests, limits };
}

/**
 * One container's requests after admission: its requests; a limit without a request requests the
 * limit; a resource it sets neither for takes the LimitRange's `defaultRequest`, else its `default`.
 */
function containerRequests(container: unknown, defaults: ContainerDefaults): Record<string, number> {
  const resources = asObject(asObject(container).resources);
  const limits = amounts(resources.limits);
  const out: Record<string, number> = { ...amounts(resources.requests) };
  for (const [r, v] of Object.entries(limits)) out[r] ??= v;
  for (const r of new Set([...Object.keys(defaults.requests), ...Object.keys(defaults.limits)])) {
    if (out[r] === undefined) out[r] = defaults.requests[r] ?? defaults.limits[r];
  }
  return out;
}

/**
 * What one Pod of a template requests, as the scheduler counts it: containers and sidecars
 * (init containers with `restartPolicy: Always`) add up, and a plain init container counts alone
 * when it needs more (they run one at a time, first). `pods` is 1000: one Pod.
 */
export function podRequests(template: unknown, limitRanges: readonly unknown[] = []): ResourceAmounts {
  const spec = asObject(asObject(template).spec);
  const defaults = containerDefaults(limitRanges);
  const total: Record<string, number> = {};
  const add = (r: Record<string, number>) => {
    for (const [name, n] of Object.entries(r)) total[name] = (total[name] ?? 0) + n;
  };
  for (const c of asArray(spec.containers)) add(containerRequests(c, defaults));
  const inits = asArray(spec.initContainers);
  for (const c of inits) if (asObject(c).restartPolicy === 'Always') add(containerRequests(c, defaults));
  for (const c of inits) {
    if (asObject(c).restartPolicy === 'Always') continue;
    for (const [name, n] of Object.entries(containerRequests(c, defaults))) total[name] = Math.max(total[name] ?? 0, n);
  }
  total.pods = 1000;
  return total;
}

/** Where Pods of a template may go: node selector, required node affinity, tolerations. */
export function podPlacement(template: unknown): PodPlacement {
  const spec = asObject(asObject(template).spec);
  const selector = Object.fromEntries(Object.entries(asObject(spec.nodeSelector)).filter((e): e is [string, string] => typeof e[1] === 'string'));
  const required = asObject(asObject(asObject(spec.affinity).nodeAffinity).requiredDuringSchedulingIgnoredDuringExecution);
  const terms = asArray(required.nodeSelectorTerms).map(asObject).map((t): NodeTerm => ({ matchExpressions: requirements(t.matchExpressions), matchFields: requirements(t.matchFields) }));
  const tolerations = asArray(spec.tolerations).filter(isObject).map((t): PodToleration => ({
    ...(typeof t.key === 'string' ? { key: t.key } : {}),
    ...(typeof t.operator === 'string' ? { operator: t.operator } : {}),
    ...(typeof t.value === 'string' ? { value: t.value } : {}),
    ...(typeof t.effect === 'string' ? { effect: t.effect } : {}),
  }));
  return { nodeSelector: selector, requiredTerms: terms, tolerations };
}

function requirements(list: unknown): NodeRequirement[] {
  return asArray(list).filter(isObject).map((r) => ({ key: String(r.key), operator: String(r.operator), values: asArray(r.values).map(String) }));
}

/**
 * What an upgrade of `cluster` (a RayCluster spec) asks the scheduler for before the old cluster
 * gives anything back: the head Pod and, per worker group, what the first capacity step starts.
 * Blue/green (`NewCluster`) starts every worker at once; the incremental upgrade starts its
 * `minReplicas` and grows by `maxSurgePercent` of its full size (`clusterShape`), rounded up.
 */
export function upgradeDemand(cluster: unknown, opts: Pick<ResolvedUpgradeOptions, 'strategy' | 'maxSurgePercent'>, limitRanges: readonly unknown[] = []): PodGroupDemand[] {
  const shape = clusterShape(cluster);
  const c = asObject(cluster);
  const headTemplate = asObject(c.headGroupSpec).template;
  const out: PodGroupDemand[] = [{ name: 'head', pods: 1, requests: podRequests(headTemplate, limitRanges), placement: podPlacement(headTemplate) }];
  const groups = asArray(c.workerGroupSpecs).map(asObject);
  shape.workerGroups.forEach((g, i) => {
    const template = groups[i].template;
    const replicas = opts.strategy === 'NewClusterWithIncrementalUpgrade'
      ? Math.min(g.replicas, Math.max(g.minReplicas, Math.ceil((g.replicas * opts.maxSurgePercent) / 100)))
      : g.replicas;
    out.push({ name: g.groupName, pods: replicas * g.podsPerReplica, requests: podRequests(template, limitRanges), placement: podPlacement(template) });
  });
  return out;
}

/**
 * The cluster as the preflight sees it, from listed objects: schedulable facts of each Node, the
 * requests of every Pod bound to a node and not finished (those `releasable` picks, the Pods the
 * old RayCluster or the round gives back, marked releasable), and each ResourceQuota's hard and
 * used amounts.
 */
export function capacityPictureOf(nodes: readonly unknown[], pods: readonly unknown[], quotas: readonly unknown[], releasable: (pod: JsonObject) => boolean): CapacityPicture {
  return {
    nodes: nodes.map(asObject).map(nodeOf),
    pods: pods.map(asObject).filter(isBound).map((p): BoundPod => ({ node: String(asObject(p.spec).nodeName), requests: podRequests(p), ...(releasable(p) ? { releasable: true } : {}) })),
    quotas: quotas.map(asObject).map((q): QuotaUsage => ({
      name: String(asObject(q.metadata).name),
      hard: amounts(asObject(q.status).hard ?? asObject(q.spec).hard),
      used: amounts(asObject(q.status).used),
    })),
  };
}

function nodeOf(n: JsonObject): CapacityNode {
  const spec = asObject(n.spec);
  const taints = asArray(spec.taints).filter(isObject).map((t) => ({ key: String(t.key), ...(typeof t.value === 'string' ? { value: t.value } : {}), effect: String(t.effect) }));
  const labels = Object.fromEntries(Object.entries(asObject(asObject(n.metadata).labels)).filter((e): e is [string, string] => typeof e[1] === 'string'));
  return { name: String(asObject(n.metadata).name), labels, taints, allocatable: amounts(asObject(n.status).allocatable), ...(spec.unschedulable === true ? { unschedulable: true } : {}) };
}

/** Bound to a node and still holding its requests (Succeeded and Failed Pods give them back). */
function isBound(p: JsonObject): boolean {
  const phase = asObject(p.status).phase;
  return typeof asObject(p.spec).nodeName === 'string' && asObject(p.spec).nodeName !== '' && phase !== 'Succeeded' && phase !== 'Failed';
}
