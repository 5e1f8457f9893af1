/** Pulumi component of a RoleBasedGroup with its CoordinatedPolicy. */
import { createHash } from 'node:crypto';
import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import { RoleBasedGroup as RoleBasedGroupConstruct, RoleBasedGroupProps } from '../cdk8s/rolebasedgroup';
import { DEFAULT_RBG_EXECUTOR, RbgExecutor } from '../spec/rbg';
import { metadataNamed, renderComponentInputs } from './component-children';
import { WithInputs } from './inputs';
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
  /** Executor `pulumi`: seconds one `pulumi up` may spend on the rollout. @default 3600 */
  readonly deadlineSeconds?: number;
  /** Executor `pulumi`: poll period of the group's status, ms. @default 1000 */
  readonly pollMs?: number;
};

/**
 * A RoleBasedGroup (type `rayshift:index:RoleBasedGroup`) and, with executor `rbg` on v1alpha2,
 * its `CoordinatedPolicy` named after the group, both validated by the model. With executor
 * `operator` the group carries rayshift's coordination label and annotation for the operator; with
 * `pulumi` it carries them too and a `RoleBasedGroupRollout` runs the coordinated rollout during
 * `pulumi up`.
 */
export class RoleBasedGroup extends pulumi.ComponentResource {
  /** The group's name in the cluster. */
  public readonly groupName: pulumi.Output<string>;
  /** Who executes the coordinated rolling update. */
  public readonly executor: RbgExecutor;
  /** The `@pulumi/kubernetes` RoleBasedGroup. */
  public readonly group: pulumi.Output<k8s.apiextensions.CustomResource>;
  /** The `@pulumi/kubernetes` CoordinatedPolicy, when one is synthesized. */
  public readonly policy: pulumi.Output<k8s.apiextensions.CustomResource | undefined>;
  /** The rollout executor (executor `pulumi`). */
  public readonly rollout?: RoleBasedGroupRollout;

  constructor(name: string, args: RoleBasedGroupArgs, opts?: pulumi.ComponentResourceOptions) {
    super('rayshift:index:RoleBasedGroup', name, {}, opts);
    const { kubeconfig, context, deadlineSeconds, pollMs, ...props } = args;
    const rendered = renderComponentInputs<RoleBasedGroupProps, RoleBasedGroupConstruct>(this, name, props, (chart, resolved) => {
      refuseTwoReleases(resolved.coordination);
      return new RoleBasedGroupConstruct(chart, name, { ...resolved, metadata: metadataNamed(name, resolved.metadata) });
    });
    const ofKind = (kind: string) => rendered.apply((r) => r.resources[r.manifests.findIndex((m) => m.kind === kind)]);
    this.groupName = rendered.apply((r) => r.construct.name);
    // What the construct defaults to, known before the other values resolve.
    this.executor = args.executor ?? DEFAULT_RBG_EXECUTOR;
    this.group = ofKind('RoleBasedGroup') as pulumi.Output<k8s.apiextensions.CustomResource>;
    this.policy = ofKind('CoordinatedPolicy');
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
        { parent: this, dependsOn: [this.group] },
      );
    }
    this.registerOutputs({ groupName: this.groupName, executor: this.executor });
  }
}

/**
 * Refuses a router during a rollout (`previousRevision`): its two releases' Deployments and Services
 * would be two children of one kind, and the component names its children by kind
 * (`createKubernetesChildren`), so Pulumi would see one URN twice.
 */
function refuseTwoReleases(coordination: RoleBasedGroupProps['coordination']): void {
  (coordination ?? []).forEach((rule, i) => {
    const previous = rule?.router?.previousRevision;
    if (previous !== undefined) {
      throw new Error(`coordination[${i}].router.previousRevision: ${JSON.stringify(previous)} asks for two releases' routers, which the Pulumi component cannot render yet (it names its children by kind); allowed: unset (one router), or the cdk8s construct`);
    }
  });
}
