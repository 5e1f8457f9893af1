/**
 * Adapters from the user-facing model (`lib/spec`, validated) to the engine's normalized inputs.
 * Call them only on objects the model's validators accepted.
 */
import { IntOrPercent, parsePercent, resolvePartition } from '../spec/percent';
import { JsonObject, asArray, asObject } from '../spec/read';
import { roleReplicas } from '../spec/rbg-releases';
import { roleShape } from '../spec/rbg-shape';
import type { RbgCoordination, RbgPlanRole, RoleBasedGroupPlanInput } from './plan-rbg';

/** Replicas a percent or count of `replicas` allows down at once: counts as given, percents rounded down, at least 1. */
export function resolveMaxUnavailable(value: IntOrPercent | undefined, replicas: number): number {
  if (value === undefined) return 1;
  const p = parsePercent(value);
  const n = p === undefined ? Number(value) : Math.floor((p * replicas) / 100);
  return Math.max(1, Number.isFinite(n) ? n : 1);
}

/**
 * Plan inputs of a RoleBasedGroup: one per rolling-update rule with a `maxSkew`, from the
 * group's inline v1alpha1 `spec.coordination` or from its CoordinatedPolicy's `spec.policies`.
 * `coordination` names who runs the rules: `parallel` for rayshift's executors (the default),
 * `controller` for rules RBG's own controller runs (executor `rbg`).
 */
export function rbgPlanInputs(group: JsonObject, policy?: JsonObject, coordination: RbgCoordination = 'parallel'): (RoleBasedGroupPlanInput & { rule: string })[] {
  const name = String(asObject(group.metadata).name ?? '');
  const roles = new Map(asArray(asObject(group.spec).roles).map((r) => [String(asObject(r).name), asObject(r)]));
  const rules = policy ? asArray(asObject(policy.spec).policies) : asArray(asObject(group.spec).coordination);
  const out: (RoleBasedGroupPlanInput & { rule: string })[] = [];
  for (const r of rules.map(asObject)) {
    const ru = asObject(asObject(r.strategy).rollingUpdate);
    if (Object.keys(ru).length === 0) continue;
    const planRoles: RbgPlanRole[] = asArray(r.roles)
      .map((n) => roles.get(String(n)))
      .filter((role): role is JsonObject => role !== undefined)
      .map((role) => {
        const replicas = roleReplicas(role);
        return {
          name: String(role.name),
          replicas,
          partition: ru.partition === undefined ? 0 : resolvePartition(ru.partition as IntOrPercent, replicas),
          maxUnavailable: resolveMaxUnavailable(ru.maxUnavailable as IntOrPercent | undefined, replicas),
        };
      });
    out.push({
      kind: 'RoleBasedGroup',
      name,
      rule: String(r.name),
      maxSkewPercent: parsePercent(ru.maxSkew) ?? 100,
      roles: planRoles,
      coordination,
    });
  }
  return out;
}

/** `input` with each role's shape (`roleShape`) from `group`, so that its plan counts Pods and accelerators. */
export function withRoleShapes<T extends RoleBasedGroupPlanInput>(input: T, group: JsonObject): T {
  const roles = new Map(asArray(asObject(group.spec).roles).map((r) => [String(asObject(r).name), asObject(r)]));
  return { ...input, roles: input.roles.map((r) => ({ ...r, shape: roleShape(roles.get(r.name) ?? {}, group) })) };
}
