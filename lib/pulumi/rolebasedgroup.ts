/** Pulumi component of a RoleBasedGroup with its CoordinatedPolicy. */
import { createHash } from 'node:crypto';
import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import { RoleBasedGroup as RoleBasedGroupConstruct, RoleBasedGroupProps } from '../cdk8s/rolebasedgroup';
import { RbgExecutor } from '../spec/rbg';
import { metadataNamed, renderComponent } from './component-children';
import { RoleBasedGroupRollout } from './rbg-rollout';

/** Props of the `RoleBasedGroup` component: the construct's, plus how executor `pulumi` connects and how long it may run. */
export type RoleBasedGroupArgs = RoleBasedGroupProps & {
  /** Executor `pulumi`: kubeconfig text (secret). @default stack config `rayshift:kubeconfig`, else `$KUBECONFIG` */
  readonly kubeconfig?: pulumi.Input<string>;
  /** Executor `pulumi`: kubeconfig context. @default stack config `rayshift:context`, else the current one */
  readonly context?: string;
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
  public readonly groupName: string;
  /** Who executes the coordinated rolling update. */
  public readonly executor: RbgExecutor;
  /** The `@pulumi/kubernetes` RoleBasedGroup. */
  public readonly group: k8s.apiextensions.CustomResource;
  /** The `@pulumi/kubernetes` CoordinatedPolicy, when one is synthesized. */
  public readonly policy?: k8s.apiextensions.CustomResource;
  /** The rollout executor (executor `pulumi`). */
  public readonly rollout?: RoleBasedGroupRollout;

  constructor(name: string, args: RoleBasedGroupArgs, opts?: pulumi.ComponentResourceOptions) {
    super('rayshift:index:RoleBasedGroup', name, {}, opts);
    const { construct, manifests, resources } = renderComponent(this, name, (chart) => new RoleBasedGroupConstruct(chart, name, { ...args, metadata: metadataNamed(name, args.metadata) }));
    const ofKind = (kind: string) => resources[manifests.findIndex((m) => m.kind === kind)];
    this.groupName = construct.name;
    this.executor = construct.executor;
    this.group = ofKind('RoleBasedGroup');
    this.policy = ofKind('CoordinatedPolicy');
    if (this.executor === 'pulumi') {
      const manifest = manifests.find((m) => m.kind === 'RoleBasedGroup')!;
      this.rollout = new RoleBasedGroupRollout(
        `${name}-rollout`,
        {
          apiVersion: manifest.apiVersion,
          name: this.groupName,
          namespace: manifest.metadata.namespace ?? 'default',
          specHash: createHash('sha256').update(JSON.stringify(manifest.spec)).digest('hex').slice(0, 16),
          ...(args.kubeconfig !== undefined ? { kubeconfig: args.kubeconfig } : {}),
          ...(args.context !== undefined ? { context: args.context } : {}),
          ...(args.deadlineSeconds !== undefined ? { deadlineSeconds: args.deadlineSeconds } : {}),
          ...(args.pollMs !== undefined ? { pollMs: args.pollMs } : {}),
        },
        { parent: this, dependsOn: [this.group] },
      );
    }
    this.registerOutputs({ groupName: this.groupName, executor: this.executor });
  }
}
