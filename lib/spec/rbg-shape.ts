/**
 * What a RoleBasedGroup role runs per replica (instance): its Pods and their extended resources
 * (accelerators), and the surge replicas its rolling update may add, for the cost `rayshift plan`
 * shows; its replica's Pod templates (`replicaPods`) for the capacity preflight of a rollout's
 * first round too (lib/engine/capacity-demand.ts). Pods are counted with `podExtendedResources`
 * (lib/spec/raycluster.ts), the one home of accelerator counting.
 */
import { RBG_INSTANCE_PATTERN_ANNOTATION, RBG_STATELESS_PATTERN } from './object-names';
import { parsePercent } from './percent';
import { ResourceCounts, podExtendedResources } from './raycluster';
import { JsonObject, asArray, asObject, isInteger } from './read';
import { roleReplicas, roleWorkloadType } from './rbg-releases';
import { roleRollingUpdate } from './rbg-roles';

/** One replica of a role, and the surge of its rolling update. */
export interface RoleShape {
  /** Pods of one replica: 1 standalone, `size` for a leader/worker instance, the components' sizes summed. */
  readonly podsPerReplica: number;
  /** Extended resources of one replica's Pods together. */
  readonly perReplica: ResourceCounts;
  /** Extra replicas the rolling update may create (`maxSurge`: a count, or a percent of `replicas` rounded up as RBG's workloads do; default 0). */
  readonly maxSurge: number;
}

function sum(into: Record<string, number>, r: ResourceCounts, times: number): void {
  for (const [name, n] of Object.entries(r)) into[name] = (into[name] ?? 0) + n * times;
}

/** A non-negative integer field, else its default (the CRDs default `size` to 1). */
const count = (v: unknown, fallback: number) => (isInteger(v) && v >= 0 ? v : fallback);

/** The Pods of one replica of a role made from one template. */
export interface ReplicaPods {
  /** The component's name (a `customComponentsPattern` role); absent for a role of one template. */
  readonly component?: string;
  /** Their Pod template, as the role writes it. */
  readonly template: unknown;
  /** How many Pods of one replica it makes. */
  readonly pods: number;
}

/**
 * The Pods of one replica of `role` in `group` (v1alpha1 or v1alpha2), per template: the template
 * inline or through `templateRef` (`spec.roleTemplates`), sized by `leaderWorkerPattern.size`,
 * `leaderWorkerSet.size` or each component's size. Leader and worker template patches are not
 * applied: every Pod of an instance is the base template's.
 */
export function replicaPods(role: JsonObject, group: JsonObject): ReplicaPods[] {
  const templates = new Map(asArray(asObject(group.spec).roleTemplates).map((t) => [String(asObject(t).name), asObject(t).template]));
  const templateOf = (source: JsonObject) => source.template ?? templates.get(String(asObject(source.templateRef).name));
  const components = asArray(asObject(role.customComponentsPattern).components ?? role.components);
  if (components.length > 0) return components.map(asObject).map((c) => ({ component: String(c.name), template: c.template, pods: count(c.size, 1) }));
  const leaderWorker = role.leaderWorkerPattern ?? role.leaderWorkerSet;
  const source = asObject(role.standalonePattern ?? role.leaderWorkerPattern ?? role);
  return [{ template: templateOf(source), pods: leaderWorker === undefined ? 1 : count(asObject(leaderWorker).size, 1) }];
}

/**
 * True when `role` of `group` runs as a Stateless RoleInstanceSet (v1alpha2, its role-instance-pattern
 * annotation; how rayshift renders a routed role): its replicas have no ordinals, and which of them
 * an update replaces is its controller's choice.
 */
export function roleReplicasUnordered(role: JsonObject, group: JsonObject): boolean {
  return roleWorkloadType(group.apiVersion, role).kind === 'RoleInstanceSet' && asObject(role.annotations)[RBG_INSTANCE_PATTERN_ANNOTATION] === RBG_STATELESS_PATTERN;
}

/** The shape of `role` in `group`: its replica's Pods (`replicaPods`) counted, and its surge. */
export function roleShape(role: JsonObject, group: JsonObject): RoleShape {
  const perReplica: Record<string, number> = {};
  let pods = 0;
  for (const p of replicaPods(role, group)) {
    pods += p.pods;
    sum(perReplica, podExtendedResources(p.template), p.pods);
  }
  const replicas = roleReplicas(role);
  const surge = roleRollingUpdate(role).maxSurge;
  const percent = parsePercent(surge);
  const maxSurge = percent !== undefined ? Math.ceil((percent * replicas) / 100) : count(surge, 0);
  return { podsPerReplica: pods, perReplica, maxSurge };
}
