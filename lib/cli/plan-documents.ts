/**
 * What `rayshift plan` plans from valid documents, and what it leaves out with the reason: every
 * RayService (its strategy, or the one it gets when `spec.upgradeStrategy.type` is unset) with the
 * Pods and accelerators of its clusters, and every rolling-update rule of a RoleBasedGroup with the
 * Pods and accelerators of its roles.
 */
import { plan } from '../engine/plan';
import type { RayServicePlan } from '../engine/plan-rayservice';
import type { CapacityOutcome } from '../engine/capacity-preflight';
import type { RoleBasedGroupPlan, RoleBasedGroupPlanInput } from '../engine/plan-rbg';
import { rbgPlanInputs, withRoleShapes } from '../engine/from-spec';
import { RbgWarmupStage, planWarmupStage } from '../engine/rbg-warmup';
import { clusterShape } from '../spec/raycluster';
import { RAYSHIFT_API_VERSION, RAY_SERVICE_DEFAULTS, RayServiceSpec, resolveUpgradeOptions } from '../spec/rayservice';
import { RBG_V1ALPHA1 } from '../spec/rbg';
import { asArray, asObject } from '../spec/read';
import { InputDocument, executorCoordination, groupOfPolicy, identity } from './documents';

/** What `plan --cluster` found for an upgrade started now on the live cluster. */
export interface PlanCapacity {
  /** The namespace whose quotas and limits were read. */
  readonly namespace: string;
  /** The serving cluster whose Pods the old side would give back, when the service exists there. */
  readonly activeCluster?: string;
  /** `fits`, `fitsAfterOldShrinks` or `doesNotFit`; absent when the cluster shows no Node. */
  readonly outcome?: CapacityOutcome;
  /** Why it does not fit now, or why there was nothing to judge. */
  readonly message?: string;
}

/** A RayService plan, with why its strategy is the one planned when the spec leaves it unset, and (`--cluster`) the capacity preflight. */
export type CliRayServicePlan = RayServicePlan & { readonly defaultStrategy?: string; readonly capacity?: PlanCapacity };

/** A RoleBasedGroup plan of one rule, with the warmup that runs before its first round. */
export type CliRoleBasedGroupPlan = RoleBasedGroupPlan & { readonly rule: string; readonly warmup?: RbgWarmupStage };

/** Any plan `rayshift plan` prints. */
export type CliPlan = CliRayServicePlan | CliRoleBasedGroupPlan;

/** An object (or a rule of one) that gets no plan, and why. */
export interface SkippedObject {
  readonly kind: string;
  readonly name: string;
  readonly namespace: string;
  /** The rule of the object it is about, when it is about one. */
  readonly rule?: string;
  readonly reason: string;
}

/** Why a RayService without `spec.upgradeStrategy.type` is planned with `NewCluster`, by its API version. */
function defaultStrategyReason(apiVersion: unknown): string {
  const strategy = RAY_SERVICE_DEFAULTS.strategy;
  return apiVersion === RAYSHIFT_API_VERSION
    ? `spec.upgradeStrategy.type is unset: the rayshift operator upgrades with ${strategy} (a full second cluster until the switch)`
    : `spec.upgradeStrategy.type is unset: KubeRay v1.7.0 upgrades with ${strategy} (a full second cluster until the switch), unless its operator runs with ENABLE_ZERO_DOWNTIME=false, where a cluster-spec change is not rolled out at all`;
}

/** The namespace as a message shows it. */
const ns = (namespace: string) => (namespace === '' ? '(unset)' : namespace);

/**
 * The plans of valid documents, and what gets none with the reason: one plan per RayService, one
 * per rolling-update rule of a RoleBasedGroup (its inline v1alpha1 rules, its CoordinatedPolicy's,
 * and those of its `rayshift.dev/coordination` annotation, which a rayshift executor runs).
 */
export function planDocuments(documents: readonly InputDocument[], failAtRound?: number): { plans: CliPlan[]; skipped: SkippedObject[] } {
  const plans: CliPlan[] = [];
  const skipped: SkippedObject[] = [];
  const groups = documents.filter((d) => identity(d).kind === 'RoleBasedGroup');
  for (const doc of documents) {
    const { kind, name, namespace } = identity(doc);
    const spec = asObject(doc.manifest.spec);
    if (kind === 'RayService') {
      const options = resolveUpgradeOptions(spec as unknown as RayServiceSpec);
      const unset = asObject(spec.upgradeStrategy).type === undefined;
      const p = plan({ kind: 'RayService', name, options, cluster: clusterShape(spec.rayClusterConfig) });
      plans.push({ ...p, ...(unset ? { defaultStrategy: defaultStrategyReason(doc.manifest.apiVersion) } : {}) });
    } else if (kind === 'CoordinatedPolicy' && groupOfPolicy(doc, documents) === undefined) {
      const existing = groups.map((g) => `${identity(g).name} (namespace ${ns(identity(g).namespace)})`);
      skipped.push({
        kind,
        name,
        namespace,
        reason: `no RoleBasedGroup named ${name} in namespace ${ns(namespace)} among the files (${existing.length > 0 ? `groups: ${existing.join(', ')}` : 'there is none'}); RBG applies a CoordinatedPolicy only to the group of the same name and namespace`,
      });
    } else if (kind === 'RoleBasedGroup') {
      planGroup(doc, documents, plans, skipped, failAtRound);
    }
  }
  return { plans, skipped };
}

/** Plans each rolling-update rule of a group; a rule without one, or a group without rules, is skipped with the reason. */
function planGroup(doc: InputDocument, documents: readonly InputDocument[], plans: CliPlan[], skipped: SkippedObject[], failAtRound?: number): void {
  const { kind, name, namespace } = identity(doc);
  const policy = documents.find((d) => identity(d).kind === 'CoordinatedPolicy' && groupOfPolicy(d, documents) === doc);
  const reading = executorCoordination(doc);
  // The warmup (RBG v0.8) runs once per group, before the first round: it is shown with the first rule it gates.
  let warmup = reading?.warmup ? planWarmupStage(doc.manifest, reading.warmup, true) : undefined;
  const executorRules = (reading?.rules ?? []).map(
    (r): RoleBasedGroupPlanInput & { rule: string } => ({
      kind: 'RoleBasedGroup',
      name,
      rule: r.name,
      maxSkewPercent: r.maxSkewPercent,
      roles: r.roles,
      coordination: 'parallel',
      ...(failAtRound !== undefined ? { failAtRound } : {}),
      ...(r.router ? { router: { prefill: r.router.prefill, decode: r.router.decode } } : {}),
    }),
  );
  const inputs = [...rbgPlanInputs(doc.manifest, policy?.manifest, 'controller'), ...executorRules];
  for (const input of inputs) {
    const gated = warmup !== undefined && input.roles.some((r) => r.name in warmup!.images);
    plans.push({ ...plan(withRoleShapes(input, doc.manifest)), rule: input.rule, ...(gated ? { warmup } : {}) });
    if (gated) warmup = undefined;
  }
  const rules = asArray(policy ? asObject(policy.manifest.spec).policies : asObject(doc.manifest.spec).coordination).map(asObject);
  for (const r of rules) {
    if (asObject(r.strategy).rollingUpdate === undefined) {
      const strategies = Object.keys(asObject(r.strategy)).join(', ') || 'none';
      skipped.push({ kind, name, namespace, rule: String(r.name), reason: `sets no rollingUpdate (strategies: ${strategies}): nothing rolls under it` });
    }
  }
  if (inputs.length === 0 && rules.length === 0) {
    const where = doc.manifest.apiVersion === RBG_V1ALPHA1 ? 'no spec.coordination rule' : `no CoordinatedPolicy named ${name} in namespace ${ns(namespace)} among the files`;
    skipped.push({ kind, name, namespace, reason: `${where} and no rayshift.dev/coordination annotation: each role rolls out on its own rolloutStrategy, uncoordinated` });
  }
}
