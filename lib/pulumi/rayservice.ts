/**
 * The `RayService` component (type `rayshift:index:RayService`): the cdk8s construct's props and
 * validation, run by one of three executors.
 *
 * | executor | children | who moves weights and capacities |
 * |---|---|---|
 * | `kuberay` | `ray.io/v1` RayService (awaited: `pulumi.com/waitFor: condition=Ready`) + `UpgradeProgress` | KubeRay, which creates and owns its Gateway and route; Pulumi only writes the RayService spec |
 * | `operator` | `rayshift.dev/v1alpha1` RayService (awaited the same way) + `UpgradeProgress` | the rayshift operator; Pulumi only writes the spec |
 * | `pulumi` | `RayServiceMigration` (dynamic) | its provider, during `pulumi up`; the objects it creates are not Pulumi children, so `@pulumi/kubernetes` never writes them |
 */
import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import { Node } from 'constructs';
import { RayService as RayServiceConstruct, RayServiceProps } from '../cdk8s/rayservice';
import { clusterSpecHash } from '../engine/cluster-hash';
import { ProblemList, checkOneOf, formatProblem } from '../spec/problem';
import { RAY_SERVICE_EXECUTORS, RayServiceExecutor } from '../spec/rayservice';
import { metadataNamed, renderComponentInputs } from './component-children';
import { WithInputs } from './inputs';
import { DEADLINE_ACTIONS, DeadlineAction } from './migration-inputs';
import { RayServiceMigration } from './migration';
import { UpgradeProgress } from './upgrade-progress';

/** Who runs upgrades: the construct's executors, or `pulumi` (the dynamic provider, during `pulumi up`). */
export type RayServiceComponentExecutor = RayServiceExecutor | 'pulumi';

/** Every executor of the `RayService` component. */
export const RAY_SERVICE_COMPONENT_EXECUTORS: readonly RayServiceComponentExecutor[] = [...RAY_SERVICE_EXECUTORS, 'pulumi'];

/** Annotation that makes `@pulumi/kubernetes` wait for the RayService's Ready condition. */
export const WAIT_FOR_READY = { 'pulumi.com/waitFor': 'condition=Ready' } as const;

/**
 * The construct's props a `RayService` component takes as `pulumi.Input`s (outputs of other
 * resources: a Namespace's name, a Gateway's, an image tag). Not `executor`: it decides which
 * children the component has, which Pulumi must know before any value resolves.
 */
export type RayServiceInputProps = 'metadata' | 'rayClusterConfig' | 'serveConfig' | 'upgradeStrategy' | 'rayClusterDeletionDelaySeconds' | 'excludeHeadPodFromServeSvc' | 'rayshift';

/** Props of the `RayService` component: the construct's (see `RayServiceInputProps`), plus how `pulumi up` executes and follows upgrades. */
export type RayServiceArgs = WithInputs<Omit<RayServiceProps, 'executor'>, RayServiceInputProps> & {
  /** Who runs upgrades: `kuberay`, `operator` or `pulumi` (checked with the construct's props). @default "kuberay" */
  readonly executor?: RayServiceComponentExecutor;
  /** Kubeconfig text for the dynamic resources (secret). @default stack config `rayshift:kubeconfig`, else `$KUBECONFIG` */
  readonly kubeconfig?: pulumi.Input<string>;
  /** Kubeconfig context for the dynamic resources. @default stack config `rayshift:context`, else the current one */
  readonly context?: pulumi.Input<string>;
  /** Seconds one `pulumi up` may spend on a rollout (executing it, or following it). @default 3600 */
  readonly deadlineSeconds?: number;
  /** Executor `pulumi`: what happens when the deadline passes mid-upgrade. @default "rollback" */
  readonly onDeadline?: DeadlineAction;
  /** Executor `pulumi`: dashboard address template with `{namespace}` and `{cluster}`. @default KubeRay's in-cluster head Service */
  readonly dashboardAddressTemplate?: string;
  /** Executor `pulumi`: poll period while waiting for Serve capacity, ms. @default 1000 */
  readonly capacityPollMs?: number;
  /** Executors `kuberay` and `operator`: poll period of the upgrade follower, ms. @default 2000 */
  readonly progressPollMs?: number;
};

/** A RayService whose upgrades run during or after `pulumi up`, per its executor (see the file comment). */
export class RayService extends pulumi.ComponentResource {
  /** The service's name in the cluster. */
  public readonly serviceName: pulumi.Output<string>;
  /** The service's namespace (`default` when unset). */
  public readonly namespace: pulumi.Output<string>;
  /** The executor. */
  public readonly executor: RayServiceComponentExecutor;
  /** The RayService object (executors `kuberay` and `operator`). */
  public readonly resource?: pulumi.Output<k8s.apiextensions.CustomResource>;
  /** The upgrade follower (executors `kuberay` and `operator`). */
  public readonly progress?: UpgradeProgress;
  /** The running service (executor `pulumi`). */
  public readonly migration?: RayServiceMigration;
  /** The serving RayCluster after this `pulumi up`. */
  public readonly activeClusterName: pulumi.Output<string | undefined>;

  constructor(name: string, args: RayServiceArgs, opts?: pulumi.ComponentResourceOptions) {
    super('rayshift:index:RayService', name, {}, opts);
    const executor = args.executor ?? 'kuberay';
    // The component's own unions, for callers TypeScript does not check (JavaScript, the plugin's
    // languages); reported with the construct's problems. An unknown executor reaches the
    // construct as its default, so that its problem is named once, with the component's values.
    const problems = new ProblemList();
    checkOneOf(problems, 'executor', executor, RAY_SERVICE_COMPONENT_EXECUTORS, 'an executor');
    checkOneOf(problems, 'onDeadline', args.onDeadline, DEADLINE_ACTIONS, 'a deadline action');
    const constructExecutor = executor === 'pulumi' ? 'operator' : RAY_SERVICE_EXECUTORS.includes(executor) ? executor : undefined;
    const { executor: _executor, kubeconfig, context, deadlineSeconds, onDeadline, dashboardAddressTemplate, capacityPollMs, progressPollMs, ...props } = args;
    const rendered = renderComponentInputs<Omit<RayServiceProps, 'executor'>, RayServiceConstruct>(
      this,
      name,
      props,
      (chart, resolved) => {
        const service = new RayServiceConstruct(chart, name, { ...resolved, executor: constructExecutor, metadata: metadataNamed(name, resolved.metadata) });
        Node.of(chart).addValidation({ validate: () => problems.result().errors.map((p) => `${service.describe()}: ${formatProblem(p)}`) });
        return service;
      },
      {
        include: () => executor !== 'pulumi',
        childOptions: () => ({ annotations: { ...WAIT_FOR_READY, ...(deadlineSeconds !== undefined ? { 'pulumi.com/timeoutSeconds': String(deadlineSeconds) } : {}) } }),
      },
    );
    this.serviceName = rendered.apply((r) => r.construct.name);
    this.namespace = rendered.apply((r) => r.construct.apiObject.metadata.namespace ?? 'default');
    this.executor = executor;
    const connection = { ...(kubeconfig !== undefined ? { kubeconfig } : {}), ...(context !== undefined ? { context } : {}) };
    if (executor === 'pulumi') {
      this.migration = new RayServiceMigration(
        `${name}-migration`,
        {
          name: this.serviceName,
          namespace: this.namespace,
          spec: rendered.apply((r) => r.construct.spec),
          labels: rendered.apply((r): Record<string, string> => r.construct.apiObject.metadata.toJson().labels ?? {}),
          ...connection,
          ...(dashboardAddressTemplate !== undefined ? { dashboardAddressTemplate } : {}),
          ...(deadlineSeconds !== undefined ? { deadlineSeconds } : {}),
          ...(onDeadline !== undefined ? { onDeadline } : {}),
          ...(capacityPollMs !== undefined ? { capacityPollMs } : {}),
        },
        { parent: this },
      );
      this.activeClusterName = this.migration.activeClusterName;
    } else {
      this.resource = rendered.apply((r) => r.resources[0]);
      this.progress = new UpgradeProgress(
        `${name}-progress`,
        {
          apiVersion: rendered.apply((r) => r.construct.apiObject.apiVersion),
          name: this.serviceName,
          namespace: this.namespace,
          goalSpecHash: rendered.apply((r) => clusterSpecHash(r.construct.spec.rayClusterConfig as never)),
          ...connection,
          ...(deadlineSeconds !== undefined ? { deadlineSeconds } : {}),
          ...(progressPollMs !== undefined ? { pollMs: progressPollMs } : {}),
        },
        { parent: this, dependsOn: [this.resource] },
      );
      this.activeClusterName = this.progress.activeClusterName;
    }
    this.registerOutputs({ serviceName: this.serviceName, namespace: this.namespace, executor, activeClusterName: this.activeClusterName });
  }
}
