import { Construct } from 'constructs';
import { COORDINATED_POLICY_TYPE } from '../spec/object-names';
import { CoordinationRule, validateCoordinatedPolicy } from '../spec/rbg';
import type { RoleBasedGroup } from './rolebasedgroup';
import { Problem, ValidationResult } from '../spec/problem';
import { ValidatedObject } from './validated-object';

/** Props of a `CoordinatedPolicy`. */
export interface CoordinatedPolicyProps {
  /** The group the policy applies to; the policy takes its name and namespace. */
  readonly group: RoleBasedGroup;
  /** Rules. @default the group's rolling-update and scaling rules (AffinityScheduling rendered into batch roles) */
  readonly rules?: CoordinationRule[];
}

/** The wire `strategy` of a rule: its rolling-update and scaling parts. */
export function toWireStrategy(rule: CoordinationRule): Record<string, unknown> {
  return {
    ...(rule.rollingUpdate ? { rollingUpdate: rule.rollingUpdate } : {}),
    ...(rule.scaling ? { scaling: rule.scaling } : {}),
  };
}

/**
 * A v1alpha2 CoordinatedPolicy. It is always named after its RoleBasedGroup in the group's
 * namespace, because upstream RBG binds a policy to the group of the same name and nothing else
 * (its own examples use different names and silently do nothing).
 */
export class CoordinatedPolicy extends ValidatedObject {
  readonly #props: CoordinatedPolicyProps;

  constructor(scope: Construct, id: string, props: CoordinatedPolicyProps) {
    const group = props.group;
    super(scope, id, {
      ...COORDINATED_POLICY_TYPE,
      metadata: {
        name: group.name,
        ...(group.apiObject.metadata.namespace !== undefined ? { namespace: group.apiObject.metadata.namespace } : {}),
      },
    });
    this.#props = props;
  }

  protected renderSpec(): any {
    return { policies: (this.#props.rules ?? this.#props.group.rendered().rules).map((r) => ({ name: r.name, roles: r.roles, strategy: toWireStrategy(r) })) };
  }

  protected validateManifest(manifest: unknown): ValidationResult {
    const own = validateCoordinatedPolicy(manifest, this.#props.group.apiObject.toJson());
    if (this.#props.rules !== undefined) return own;
    // The rules are the group's, whose own findings already report their problems where the user
    // wrote them (its `coordination`): each is reported once, by the group.
    const group = this.#props.group.findings();
    const known = new Set([...group.errors, ...group.warnings].map((p) => `${p.severity}:${p.message}`));
    const fresh = (p: Problem) => !known.has(`${p.severity}:${p.message}`);
    return { errors: own.errors.filter(fresh), warnings: own.warnings.filter(fresh) };
  }
}
