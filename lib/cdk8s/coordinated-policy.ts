import { Construct } from 'constructs';
import { COORDINATED_POLICY_TYPE } from '../spec/object-names';
import { CoordinationRule, validateCoordinatedPolicy } from '../spec/rbg';
import type { RoleBasedGroup } from './rolebasedgroup';
import { Problem, ValidationResult, show } from '../spec/problem';
import { asArray, asObject, isObject } from '../spec/read';
import { givenProps } from './given-props';
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

/** Why a policy's wire form cannot carry each of these rule fields. */
const NOT_CARRIED = {
  affinityScheduling: "cannot be carried by a CoordinatedPolicy (its strategy has rollingUpdate and scaling only); give it in the RoleBasedGroup's coordination, which renders it into batch roles",
  router: "cannot be carried by a CoordinatedPolicy (RBG's controller moves no route weight between releases); give it in the RoleBasedGroup's coordination with executor operator or pulumi",
} as const;

/**
 * An error for each given rule with `affinityScheduling` or `router`, which a policy's wire form has
 * no field for (and no RBG release implements): without it the setting would vanish unsaid.
 */
function droppedFields(rules: unknown): Problem[] {
  return asArray(rules).flatMap((r, i) =>
    (Object.keys(NOT_CARRIED) as (keyof typeof NOT_CARRIED)[])
      .filter((field) => asObject(r)[field] !== undefined)
      .map((field) => ({ path: `rules[${i}].${field}`, message: NOT_CARRIED[field], severity: 'error' as const })),
  );
}

/**
 * A v1alpha2 CoordinatedPolicy. It is always named after its RoleBasedGroup in the group's
 * namespace, because upstream RBG binds a policy to the group of the same name and nothing else
 * (its own examples use different names and silently do nothing).
 */
export class CoordinatedPolicy extends ValidatedObject {
  readonly #props: CoordinatedPolicyProps;

  constructor(scope: Construct, id: string, props: CoordinatedPolicyProps) {
    props = givenProps(props);
    // Without a group (a JavaScript caller) the policy has a generated name; validation names `group`.
    const group = Construct.isConstruct(props.group) ? props.group : undefined;
    super(scope, id, {
      ...COORDINATED_POLICY_TYPE,
      metadata: group && {
        name: group.name,
        ...(group.apiObject.metadata.namespace !== undefined ? { namespace: group.apiObject.metadata.namespace } : {}),
      },
    });
    this.#props = props;
  }

  protected renderSpec(): any {
    const group = Construct.isConstruct(this.#props.group) ? this.#props.group : undefined;
    const rules: unknown = this.#props.rules ?? group?.rendered().rules ?? [];
    // Rules that are not a list of mappings are written as given, for the validator to name.
    return { policies: Array.isArray(rules) ? rules.map((r) => (isObject(r) ? { name: r.name, roles: r.roles, strategy: toWireStrategy(r as unknown as CoordinationRule) } : r)) : rules };
  }

  protected validateManifest(manifest: unknown): ValidationResult {
    const given = this.#props.group as unknown;
    if (!Construct.isConstruct(given)) {
      const own = validateCoordinatedPolicy(manifest);
      const missing: Problem = { path: 'group', message: `is required: the RoleBasedGroup construct the policy applies to; got ${show(given)}`, severity: 'error' };
      return { errors: [missing, ...own.errors], warnings: own.warnings };
    }
    const own = validateCoordinatedPolicy(manifest, this.#props.group.apiObject.toJson());
    if (this.#props.rules !== undefined) return { errors: [...droppedFields(this.#props.rules), ...own.errors], warnings: own.warnings };
    // The rules are the group's, whose own findings already report their problems where the user
    // wrote them (its `coordination`): each is reported once, by the group.
    const group = this.#props.group.findings();
    const known = new Set([...group.errors, ...group.warnings].map((p) => `${p.severity}:${p.message}`));
    const fresh = (p: Problem) => !known.has(`${p.severity}:${p.message}`);
    return { errors: own.errors.filter(fresh), warnings: own.warnings.filter(fresh) };
  }
}
