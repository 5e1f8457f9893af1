import { ApiObjectMetadata } from 'cdk8s';
import { Construct } from 'constructs';
import { WARMUP_TYPE } from '../spec/object-names';
import { ValidationResult } from '../spec/problem';
import { JsonObject, asObject, isObject } from '../spec/read';
import { RbgRelease } from '../spec/rbg-releases';
import { WarmupActions, WarmupPolicies, roleImages, validateRoleBasedGroupWarmup, wireWarmupActions } from '../spec/rbg-warmup';
import type { RoleBasedGroup } from './rolebasedgroup';
import { givenProps } from './given-props';
import { ValidatedObject } from './validated-object';
import type { PinnedSchemaOptions } from '../spec/pinned-schemas';

/** Nodes a warmup targets: by name or by labels (exactly one). */
export interface WarmupNodes {
  /** Node names. @default none (give names or selector) */
  readonly names?: string[];
  /** Node labels to select by. @default none (give names or selector) */
  readonly selector?: Readonly<Record<string, string>>;
  /** What to do on each node. */
  readonly actions: WarmupActions;
}

/** A group whose roles' nodes a warmup targets (the nodes its Pods run on when the warmup starts). */
export interface WarmupGroupTarget {
  /** The group: a construct (its name, namespace, release and templates are used) or a name in the warmup's namespace. */
  readonly group: RoleBasedGroup | string;
  /** Actions per role. @default with a group construct, every role preloading the images of its template; required with a name */
  readonly roles?: Readonly<Record<string, WarmupActions>>;
}

/** Props of a `RoleBasedGroupWarmup`. */
export interface RoleBasedGroupWarmupProps {
  /** Object metadata. @default a generated name; the group construct's namespace */
  readonly metadata?: ApiObjectMetadata;
  /** The RBG release; only v0.8 has the Warmup CRD. @default the group construct's rbgVersion, else "v0.8" */
  readonly rbgVersion?: RbgRelease;
  /** Target nodes (exclusive with `group`). @default none */
  readonly nodes?: WarmupNodes;
  /** Target group (exclusive with `nodes`). @default none */
  readonly group?: WarmupGroupTarget;
  /** Parallelism, failure limits, global timeout, TTL. @default RBG's: every node at once, retried indefinitely, no timeout */
  readonly policies?: WarmupPolicies;
  /** Tolerations of the warmup Pods (e.g. GPU taints). @default none */
  readonly tolerations?: JsonObject[];
  /** Create no new warmup Pods. @default false */
  readonly paused?: boolean;
}

/**
 * An RBG v0.8 `RoleBasedGroupWarmup`: preloads images (or runs custom containers) on target nodes
 * or on the nodes a group's roles run on, one Pod per node, within its parallelism, failure limits
 * and global timeout. RBG runs it as a one-shot job and does not gate a rollout on it; to start a
 * coordinated rollout only once the new images are warm, use the `warmup` option of
 * `RoleBasedGroup` with executor `operator` or `pulumi`.
 */
export class RoleBasedGroupWarmup extends ValidatedObject {
  /** The RBG release the warmup is for. */
  public readonly rbgVersion: RbgRelease;
  readonly #props: RoleBasedGroupWarmupProps;

  constructor(scope: Construct, id: string, props: RoleBasedGroupWarmupProps) {
    props = givenProps(props);
    const construct = targetConstruct(props);
    const rbgVersion = props.rbgVersion ?? construct?.rbgVersion ?? 'v0.8';
    const namespace = props.metadata?.namespace ?? construct?.apiObject.metadata.namespace;
    super(scope, id, { ...WARMUP_TYPE, metadata: { ...props.metadata, ...(namespace !== undefined ? { namespace } : {}) } });
    this.rbgVersion = rbgVersion;
    this.#props = props;
  }

  protected renderSpec(): any {
    return warmupSpec(this.#props);
  }

  /** @jsii ignore */
  protected schemaOptions(): PinnedSchemaOptions {
    return { rbgVersion: this.rbgVersion };
  }

  protected validateManifest(manifest: unknown): ValidationResult {
    const construct = targetConstruct(this.#props);
    return validateRoleBasedGroupWarmup(manifest, { rbgVersion: this.rbgVersion, ...(construct ? { group: construct.apiObject.toJson() } : {}) });
  }
}

/** The `RoleBasedGroup` construct the warmup targets, when it was given as one (not by name). */
function targetConstruct(props: RoleBasedGroupWarmupProps): RoleBasedGroup | undefined {
  const target = asObject(props.group).group;
  return isGroupConstruct(target) ? target : undefined;
}

/** A group given as a construct (the type allows no other construct; `import type` keeps the modules acyclic). */
function isGroupConstruct(value: unknown): value is RoleBasedGroup {
  return Construct.isConstruct(value);
}

/**
 * The wire spec. Never throws: a JavaScript caller may pass what the types exclude (a
 * target that is not a mapping, a string of node names); such a value is written as given, where
 * the validator or the pinned CRD's schema names it.
 */
function warmupSpec(props: RoleBasedGroupWarmupProps): Record<string, unknown> {
  const nodes = props.nodes;
  const copy = (list: unknown) => (Array.isArray(list) ? [...list] : list);
  return {
    ...(nodes
      ? {
          targetNodes: isObject(nodes)
            ? {
                ...(nodes.names ? { nodeNames: copy(nodes.names) } : {}),
                ...(nodes.selector ? { nodeSelector: isObject(nodes.selector) ? { ...nodes.selector } : nodes.selector } : {}),
                ...wireWarmupActions(nodes.actions),
              }
            : nodes,
        }
      : {}),
    ...(props.group ? { targetRoleBasedGroup: isObject(props.group) ? targetGroup(props.group) : props.group } : {}),
    ...(props.policies ? { policies: isObject(props.policies) ? { ...props.policies } : props.policies } : {}),
    ...(props.tolerations ? { tolerations: copy(props.tolerations) } : {}),
    ...(props.paused !== undefined ? { paused: props.paused } : {}),
  };
}

function targetGroup(t: WarmupGroupTarget): Record<string, unknown> {
  const group = t.group;
  if (!isGroupConstruct(group)) return { name: group, roles: rolesOf(t.roles ?? {}) };
  const roles = t.roles ?? Object.fromEntries(group.rendered().roles.map((r) => [r.name, { imagePreload: { images: roleImages(r as unknown as JsonObject) } }]));
  return { name: group.name, roles: rolesOf(roles) };
}

function rolesOf(roles: Readonly<Record<string, WarmupActions>>): unknown {
  return isObject(roles) ? Object.fromEntries(Object.entries(roles).map(([name, actions]) => [name, wireWarmupActions(actions)])) : roles;
}
