/**
 * RoleBasedGroup status with coordination progress: each rolling-update rule (rayshift's executor's
 * `rayshift.dev/coordination` annotation, else inline v1alpha1 `spec.coordination` or the group's
 * CoordinatedPolicy) lists its roles' updated percentages, their
 * spread and whether the spread is within the rule's `maxSkew`, and, when rayshift executes the
 * rollout, where it stands (phase, reason, rounds; on the way back its rollback rounds, conditions and
 * each role's replicas on the abandoned and the previous revision), the router route's weight per
 * release (a rule with a `router`) and its analysis (the rule's
 * entry of the status annotation). RBG itself reports only `Ready`.
 */
import { create } from '@bufbuild/protobuf';
import { rbgPlanInputs } from '../../engine/from-spec';
import { readCoordination } from '../../engine/rbg-executor-rules';
import type { RouterStatus } from '../../engine/rbg-router-step';
import type { KubeObject } from '../../runtime/kube/types';
import { readRolloutStatus } from '../../runtime/rbg/status';
import { asArray, asObject, type JsonObject } from '../../spec/read';
import { RoleBasedGroupSchema, type RoleBasedGroup } from '../gen/rayshift/v1/rolebasedgroup_pb';
import { analysisFrom } from './analysis';
import { conditionsOf } from './conditions';

/** A role's replica counts as the group's status reports them. */
interface ReportedRole {
  readonly name: string;
  readonly replicas: number;
  readonly readyReplicas: number;
  readonly updatedReplicas: number;
}

function roleStatuses(group: KubeObject): ReportedRole[] {
  const int = (v: unknown) => (typeof v === 'number' ? v : 0);
  return asArray(asObject(group.status).roleStatuses).map((raw) => {
    const r = asObject(raw);
    return { name: String(r.name ?? ''), replicas: int(r.replicas), readyReplicas: int(r.readyReplicas), updatedReplicas: int(r.updatedReplicas) };
  });
}

/** The group's rolling-update rules: those rayshift's executor runs, else RBG's (its CoordinatedPolicy's or inline). */
function rulesOf(group: KubeObject, policy: KubeObject | undefined): { rule: string; maxSkewPercent: number; roles: readonly { name: string; replicas: number }[] }[] {
  const executed = readCoordination(group as unknown as JsonObject).rules ?? [];
  return executed.length > 0 ? executed.map((r) => ({ rule: r.name, maxSkewPercent: r.maxSkewPercent, roles: r.roles })) : rbgPlanInputs(group, policy);
}

/** The router route as the executor recorded it: each release's weight, the routers scaled to 0 and those the route waits for. */
function routerFrom(r: RouterStatus) {
  return {
    route: r.route,
    releases: r.releases.map((x) => ({ ...x })),
    removeOld: r.removeOld,
    problem: r.problem ?? '',
    scaledDown: (r.scaledDown ?? []).map((d) => ({ deployment: d.deployment, replicas: d.replicas })),
    waitingForRouter: [...(r.waitingForRouter ?? [])],
  };
}

/**
 * The progress of each rolling-update rule, from the roles' reported updated replicas, with what
 * rayshift's executor reports for it: its phase and rounds, the way back, each role's replicas on
 * either revision, and its analysis.
 */
function coordination(group: KubeObject, policy: KubeObject | undefined, roles: readonly ReportedRole[]) {
  const executed = readRolloutStatus(group)?.coordinations ?? [];
  return rulesOf(group, policy).map((rule) => {
    const status = executed.find((c) => c.name === rule.rule);
    const progress = rule.roles.map((r) => {
      const s = roles.find((x) => x.name === r.name);
      const desired = s?.replicas || r.replicas;
      const e = status?.roles.find((x) => x.name === r.name);
      const byRevision = e?.replicasByRevision;
      return {
        role: r.name,
        updatedPercent: desired > 0 ? ((s?.updatedReplicas ?? 0) * 100) / desired : 100,
        ...(e ? { phase: e.phase, partition: e.partition } : {}),
        ...(byRevision ? { abandonedReplicas: byRevision.abandoned, previousReplicas: byRevision.previous } : {}),
      };
    });
    const percents = progress.map((p) => p.updatedPercent);
    const skew = percents.length > 0 ? Math.max(...percents) - Math.min(...percents) : 0;
    const analysis = analysisFrom(status?.analysis);
    return {
      rule: rule.rule,
      maxSkewPercent: rule.maxSkewPercent,
      skewPercent: skew,
      withinBound: skew <= rule.maxSkewPercent,
      roles: progress,
      ...(analysis ? { analysis } : {}),
      ...(status ? { phase: status.phase, reason: status.reason, message: status.message, rounds: status.rounds, conditions: conditionsOf(status) } : {}),
      ...(status?.rollback ? { rollback: status.rollback } : {}),
      ...(status?.router ? { router: routerFrom(status.router) } : {}),
    };
  });
}

/** The status message of a group and its CoordinatedPolicy (when it has one). */
export function roleBasedGroupFromKube(group: KubeObject, policy: KubeObject | undefined): RoleBasedGroup {
  const roles = roleStatuses(group);
  return create(RoleBasedGroupSchema, {
    name: group.metadata.name ?? '',
    namespace: group.metadata.namespace ?? '',
    apiVersion: group.apiVersion,
    etag: group.metadata.resourceVersion ?? '',
    roles,
    coordination: coordination(group, policy, roles),
    conditions: conditionsOf(group.status),
    owner: readRolloutStatus(group)?.owner,
  });
}
