/** Pulumi component of a RoleBasedGroup with its CoordinatedPolicy. */
import { createHash } from 'node:crypto';
import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import { ApiObject } from 'cdk8s';
import { Node } from 'constructs';
import { RoleBasedGroup as RoleBasedGroupConstruct, RoleBasedGroupProps } from '../cdk8s/rolebasedgroup';
import { DEFAULT_RBG_EXECUTOR, RbgExecutor } from '../spec/rbg';
import { metadataNamed, renderComponentInputs } from './component-children';
import { WithInputs } from './inputs';
import type { ChildOptions } from './kubernetes-children';
import type { Manifest } from './manifests';
import { RoleBasedGroupRollout } from './rbg-rollout';

/**
 * The construct's props a `RoleBasedGroup` component takes as `pulumi.Input`s (a Namespace's name,
 * an image tag in the roles). Not `executor`: it decides whether a rollout resource exists, which
 * Pulumi must know before any value resolves.
 */
export type RoleBasedGroupInputProps = 'metadata' | 'version' | 'rbgVersion' | 'roles' | 'coordination' | 'warmup' | 'analysis';

/** Props of the `RoleBasedGroup` component: the construct's (see `RoleBasedGroupInputProps`), plus how executor `pulumi` connects and how long it may run. */
export type RoleBasedGroupArgs = WithInputs<RoleBasedGroupProps, RoleBasedGroupInputProps> & {
  /** Executor `pulumi`: kubeconfig text (secret). @default stack config `rayshift:kubeconfig`, else `$KUBECONFIG` */
  readonly kubeconfig?: pulumi.Input<string>;
  /** Executor `pulumi`: kubeconfig context. @default stack config `rayshift:context`, else the current one */
  readonly context?: pulumi.Input<string>;
  /** Executor `pulumi`: seconds one `pulumi up` may spend on the rollout, rollback rounds included (the run's own deadline, not a rule's `progressDeadlineSeconds`). @default 3600 */
  readonly deadlineSeconds?: number;
  /** Executor `pulumi`: poll period of the group's status, ms. @default 1000 */
  readonly pollMs?: number;
};

/**
 * A RoleBasedGroup (type `rayshift:index:RoleBasedGroup`) and, with executor `rbg` on v1alpha2,
 * its `CoordinatedPolicy` named after the group, both validated by the model. With executor
 * `operator` the group carries rayshift's coordination label and annotation for the operator; with
 * `pulumi` it carries them too and a `RoleBasedGroupRollout` runs the coordinated rollout during
 * `pulumi up`. A rule's `router` renders the construct's routers as children: one per release, two
 * during a rollout (`previousRevision`), and the route between them, each named after its object.
 */
export class RoleBasedGroup extends pulumi.ComponentResource {
  /** The group's name in the cluster. */
  public readonly groupName: pulumi.Output<string>;
  /** Who executes the coordinated rolling update. */
  public readonly executor: RbgExecutor;
  /** The `@pulumi/kubernetes` RoleBasedGroup. */
  public readonly group: pulumi.Output<k8s.apiextensions.CustomResource>;
  /** Every `@pulumi/kubernetes` child: the group, its policy or warmup, and each routed rule's routers and route. */
  public readonly children: pulumi.Output<k8s.apiextensions.CustomResource[]>;
  /** The `@pulumi/kubernetes` CoordinatedPolicy, when one is synthesized. */
  public readonly policy: pulumi.Output<k8s.apiextensions.CustomResource | undefined>;
  /** The rollout executor (executor `pulumi`). */
  public readonly rollout?: RoleBasedGroupRollout;
  /**
   * The release of each routed rule's prefill and decode templates, by rule name (the construct's
   * `routerRevision`): give a rule's value as its router's `previousRevision` when the templates change.
   */
  public readonly routerRevisions: pulumi.Output<Record<string, string>>;

  constructor(name: string, args: RoleBasedGroupArgs, opts?: pulumi.ComponentResourceOptions) {
    super('rayshift:index:RoleBasedGroup', name, {}, opts);
    const { kubeconfig, context, deadlineSeconds, pollMs, ...props } = args;
    const rendered = renderComponentInputs<RoleBasedGroupProps, RoleBasedGroupConstruct>(
      this,
      name,
      props,
      (chart, resolved) => new RoleBasedGroupConstruct(chart, name, { ...resolved, metadata: metadataNamed(name, resolved.metadata) }),
      { childOptions: (manifest, construct) => routerChildOptions(name, manifest, construct) },
    );
    const ofKind = (kind: string) => rendered.apply((r) => r.resources[r.manifests.findIndex((m) => m.kind === kind)]);
    this.groupName = rendered.apply((r) => r.construct.name);
    // What the construct defaults to, known before the other values resolve.
    this.executor = args.executor ?? DEFAULT_RBG_EXECUTOR;
    this.group = ofKind('RoleBasedGroup') as pulumi.Output<k8s.apiextensions.CustomResource>;
    this.policy = ofKind('CoordinatedPolicy');
    this.children = rendered.apply((r) => r.resources);
    this.routerRevisions = rendered.apply((r) => Object.fromEntries(Object.keys(r.construct.routers).map((rule) => [rule, r.construct.routerRevision(rule)!])));
    if (this.executor === 'pulumi') {
      const manifest = rendered.apply((r) => r.manifests.find((m) => m.kind === 'RoleBasedGroup')!);
      this.rollout = new RoleBasedGroupRollout(
        `${name}-rollout`,
        {
          apiVersion: manifest.apply((m) => m.apiVersion),
          name: this.groupName,
          namespace: manifest.apply((m) => m.metadata.namespace ?? 'default'),
          specHash: manifest.apply((m) => createHash('sha256').update(JSON.stringify(m.spec)).digest('hex').slice(0, 16)),
          ...(kubeconfig !== undefined ? { kubeconfig } : {}),
          ...(context !== undefined ? { context } : {}),
          ...(deadlineSeconds !== undefined ? { deadlineSeconds } : {}),
          ...(pollMs !== undefined ? { pollMs } : {}),
        },
        // Every child: the rollout writes the router route's weights as well as the group's partitions.
        { parent: this, dependsOn: this.children },
      );
    }
    this.registerOutputs({ groupName: this.groupName, executor: this.executor, routerRevisions: this.routerRevisions });
  }
}

/**
 * The child options of a router object: named `<name>-<kind>-<object name>`, because a rollout has
 * two releases' Deployments and Services (and two routed rules two of every kind), and stable across
 * the rollout, so neither release's router is replaced when the other comes or goes. With one routed
 * rule, every router object but the new release's during a rollout keeps the name it had before two
 * releases could render, `<name>-<kind>`, as an alias: a stack from then keeps its objects.
 */
function routerChildOptions(name: string, manifest: Manifest, construct: RoleBasedGroupConstruct): ChildOptions {
  const routers = Object.entries(construct.routers);
  const owner = routers.find(([, r]) => Node.of(r).findAll().some((c) => ApiObject.isApiObject(c) && c.kind === manifest.kind && c.name === manifest.metadata.name));
  if (!owner) return {};
  const [rule, r] = owner;
  const byKind = `${name}-${manifest.kind.toLowerCase()}`;
  const releases = Object.keys(r.deployments);
  const newRelease = releases.length > 1 && manifest.metadata.name.endsWith(`-${construct.routerRevision(rule)}`);
  return { name: `${byKind}-${manifest.metadata.name}`, ...(routers.length === 1 && !newRelease ? { aliases: [byKind] } : {}) };
}
