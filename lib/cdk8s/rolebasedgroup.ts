import { ApiObjectMetadata } from 'cdk8s';
import { Construct } from 'constructs';
import { RoleBasedGroup as RbgV1Alpha1, RoleBasedGroupV1Alpha2 as RbgV1Alpha2 } from '../../imports/rbg-workloads.x-k8s.io';
import { dns1123LabelProblem } from '../spec/names';
import { ProblemList, ValidationResult, show } from '../spec/problem';
import { CoordinationRule, RoleSpec, validateRoleBasedGroupModel } from '../spec/rbg';
import { asObject } from '../spec/read';
import { CoordinatedPolicy, toWireStrategy } from './coordinated-policy';
import { renderAffinityBatches } from './affinity-batches';
import { ValidatedObject } from './validated-object';

/** RoleBasedGroup API versions: v1alpha2 (RBG ≥ v0.7.0, coordination in a CoordinatedPolicy) or v1alpha1 (inline coordination). */
export type RoleBasedGroupVersion = 'v1alpha1' | 'v1alpha2';

/** Props of a `RoleBasedGroup`. */
export interface RoleBasedGroupProps {
  /** Object metadata. @default a generated name */
  readonly metadata?: ApiObjectMetadata;
  /** API version to synthesize. @default "v1alpha2" */
  readonly version?: RoleBasedGroupVersion;
  /** The roles, e.g. router, prefill and decode. */
  readonly roles: readonly RoleSpec[];
  /** Coordination rules (rolling update, scaling, AffinityScheduling). @default none */
  readonly coordination?: readonly CoordinationRule[];
}

/**
 * A RoleBasedGroup of disaggregated inference roles with coordinated rollouts.
 *
 * In v1alpha2 the rolling-update and scaling rules go to a `CoordinatedPolicy` child that is
 * always named after the group (upstream binds by name only); in v1alpha1 they are inline.
 * AffinityScheduling rules are rendered into per-batch roles with pod affinity (see
 * `renderAffinityBatches`), because no RBG release implements them.
 */
export class RoleBasedGroup extends ValidatedObject {
  /** The API version synthesized. */
  public readonly version: RoleBasedGroupVersion;
  /** The roles as given (before AffinityScheduling batches are rendered). */
  public readonly roles: readonly RoleSpec[];
  /** The coordination rules as given. */
  public readonly coordination: readonly CoordinationRule[];
  /** The CoordinatedPolicy child (v1alpha2 with rolling-update or scaling rules). */
  public readonly policy?: CoordinatedPolicy;

  constructor(scope: Construct, id: string, props: RoleBasedGroupProps) {
    const version = props.version ?? 'v1alpha2';
    const coordination = props.coordination ?? [];
    const gvk = version === 'v1alpha1' ? RbgV1Alpha1.GVK : RbgV1Alpha2.GVK;
    super(scope, id, {
      ...gvk,
      metadata: props.metadata,
      spec: () => this.renderSpec(),
      validate: (manifest) => validateGroup(manifest, props.roles, coordination, version === 'v1alpha1'),
    });
    this.version = version;
    this.roles = props.roles;
    this.coordination = coordination;
    if (version === 'v1alpha2' && coordination.some((r) => r.rollingUpdate !== undefined || r.scaling !== undefined)) {
      this.policy = new CoordinatedPolicy(this, 'CoordinatedPolicy', { group: this });
    }
  }

  /** Roles and rules as synthesized, with AffinityScheduling rendered into batch roles. */
  public rendered(): { roles: RoleSpec[]; rules: CoordinationRule[] } {
    return renderAffinityBatches(this.name, this.roles, this.coordination);
  }

  private renderSpec(): Record<string, unknown> {
    const { roles, rules } = this.rendered();
    const wireRoles = roles.map((r) => (this.version === 'v1alpha1' ? roleV1Alpha1(r) : roleV1Alpha2(r)));
    if (this.version === 'v1alpha1' && rules.length > 0) {
      return { roles: wireRoles, coordination: rules.map((r) => ({ name: r.name, roles: r.roles, strategy: toWireStrategy(r) })) };
    }
    return { roles: wireRoles };
  }
}

/** The model's checks of roles and rules, plus the group name (a DNS label, as RBG's webhook requires). */
function validateGroup(manifest: unknown, roles: readonly RoleSpec[], rules: readonly CoordinationRule[], v1alpha1: boolean): ValidationResult {
  const problems = new ProblemList();
  const name = asObject(asObject(manifest).metadata).name;
  const p = typeof name === 'string' ? dns1123LabelProblem(name) : `is required; got ${show(name)}`;
  if (p) problems.error('metadata.name', p);
  problems.addAll(validateRoleBasedGroupModel(roles, rules, v1alpha1));
  return problems.result();
}

function commonRoleFields(r: RoleSpec): Record<string, unknown> {
  return {
    name: r.name,
    replicas: r.replicas ?? 1,
    ...(r.labels ? { labels: r.labels } : {}),
    ...(r.annotations ? { annotations: r.annotations } : {}),
    ...(r.dependencies && r.dependencies.length > 0 ? { dependencies: r.dependencies } : {}),
    ...(r.rollingUpdate ? { rolloutStrategy: { type: 'RollingUpdate', rollingUpdate: r.rollingUpdate } } : {}),
  };
}

function roleV1Alpha2(r: RoleSpec): Record<string, unknown> {
  const pattern =
    (r.leaderWorkerSize ?? 1) > 1
      ? { leaderWorkerPattern: { size: r.leaderWorkerSize, template: r.template } }
      : { standalonePattern: { template: r.template } };
  return { ...commonRoleFields(r), ...pattern };
}

function roleV1Alpha1(r: RoleSpec): Record<string, unknown> {
  const lws =
    (r.leaderWorkerSize ?? 1) > 1
      ? { workload: { apiVersion: 'leaderworkerset.x-k8s.io/v1', kind: 'LeaderWorkerSet' }, leaderWorkerSet: { size: r.leaderWorkerSize } }
      : {};
  return { ...commonRoleFields(r), template: r.template, ...lws };
}
