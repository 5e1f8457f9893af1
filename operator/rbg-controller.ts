/**
 * The operator's RoleBasedGroup controller: watches the RoleBasedGroups whose coordinated rollout
 * rayshift executes (label `rayshift.dev/coordination-executor=operator`), reconciles each on a
 * keyed work queue (one worker per group at a time) with `RbgRolloutReconciler`, and wakes each
 * group at its progress deadline. New rounds are driven by watch events (the RBG controller's
 * status updates); no interval drives them. A restart resumes from the partitions and the status
 * annotation each group carries. A group whose label is removed or changed leaves the watch; it is
 * then handed back (its armed or stopped roles unpaused, the status annotation removed).
 * RoleInstanceSets (for v1alpha1 groups, StatefulSets) are watched too: RBG rewrites a group's role
 * status only when a role's replicas or ready replicas change, so a workload's updated replicas (an in-place update that never looked
 * unready to RBG) would otherwise wake the operator only at the progress deadline.
 * The router routes of routed rules (HTTPRoutes labelled `rayshift.dev/router-for`, the construct's
 * label) are watched too: a GitOps re-apply of the rendered weights (Argo CD's sync, `pulumi up`)
 * changes no group, so without it the reset would stand until the group's next event. So are the
 * routers' Deployments (same label): a router scaled back becomes ready with no other event.
 */
import { EXECUTOR_LABEL } from '../lib/spec/rbg';
import { KubeClient } from '../lib/runtime/kube/client';
import { isNotFound } from '../lib/runtime/kube/errors';
import { Informer, InformerEvent } from '../lib/runtime/kube/informer';
import { KubeObject } from '../lib/runtime/kube/types';
import { RbgRolloutMetrics } from '../lib/runtime/rbg/metrics';
import { DEPLOYMENT_TYPE, HTTPROUTE, OPERATOR_EXECUTOR, ROUTER_FOR_LABEL, RBG_V1ALPHA1_TYPE, RBG_V1ALPHA2_TYPE, ROLE_INSTANCE_SET_TYPE, RbgResourceType, STATEFUL_SET_TYPE, STATUS_ANNOTATION } from '../lib/spec/object-names';
import { RbgReconcileLogger, RbgRolloutReconciler } from '../lib/runtime/rbg/reconciler';
import { readRolloutStatus } from '../lib/runtime/rbg/status';
import { WARMUP_GROUP_LABEL, WARMUP_TYPE } from '../lib/spec/object-names';
import type { WorkQueue } from '../lib/runtime/work-queue';
import { reconcileQueue } from './reconcile-queue';
import { OwnedShards, ShardedController, keysInShard, ownerRecord, shardOfKey } from './shards';

/** Options of an `RbgRolloutController`. */
export interface RbgRolloutControllerOptions {
  /** Kubernetes access (the operator's own identity). */
  readonly client: KubeClient;
  /** Logger. */
  readonly log: RbgReconcileLogger & { error(obj: object, msg: string): void };
  /** Metrics. @default a fresh registry */
  readonly metrics?: RbgRolloutMetrics;
  /** Groups reconciled at once. @default 4 */
  readonly concurrency?: number;
  /** RoleBasedGroup API version to watch. @default v1alpha2 when the API server serves it, else v1alpha1 */
  readonly apiVersion?: 'v1alpha1' | 'v1alpha2';
  /** Read the coordinated roles' workloads where the group's role status is stale. @default true */
  readonly readWorkloads?: boolean;
  /** The shards this replica works on (a sharded operator, operator/shards.ts). @default every group */
  readonly shards?: OwnedShards;
  /** This replica's identity (its Pod name), recorded as the `owner` of the status documents of the groups it works on. @default none recorded */
  readonly identity?: string;
}

/** See the file comment. */
export class RbgRolloutController implements ShardedController {
  /** Metrics of this controller. */
  readonly metrics: RbgRolloutMetrics;
  private readonly queue: WorkQueue;
  private reconciler?: RbgRolloutReconciler;
  private informer?: Informer;
  /** Watch of the warmups the executor created (RBG v0.8): their status changes wake their group. */
  private warmups?: Informer;
  /** Watch of the RoleInstanceSets (the workloads' status changes wake their group). */
  private workloads?: Informer;
  /** Watch of the routed rules' router routes (a reset of their weights wakes their group). */
  private routes?: Informer;
  /** Watch of the routed rules' router Deployments (a scaled-back router's readiness wakes its group). */
  private routers?: Informer;
  private started = false;

  constructor(private readonly options: RbgRolloutControllerOptions) {
    this.metrics = options.metrics ?? new RbgRolloutMetrics();
    this.queue = reconcileQueue((key) => this.reconcile(key), { concurrency: options.concurrency ?? 4, errors: this.metrics.errors, log: options.log, keyField: 'rbg', reachability: options.client.reachability });
  }

  /** Finds the served RoleBasedGroup version, starts the watch and waits until its cache is synced. Without RBG installed it stays idle. */
  async start(): Promise<void> {
    const type = await this.servedType();
    this.started = true;
    if (!type) {
      this.options.log.info({}, 'RoleBasedGroups are not served (RBG not installed); the RBG controller stays idle');
      return;
    }
    this.reconciler = new RbgRolloutReconciler({ client: this.options.client, type, log: this.options.log, readWorkloads: this.options.readWorkloads, ownerOf: ownerRecord(this.options.identity, this.options.shards) });
    this.informer = this.options.client.watch(type, '*', (e) => this.onGroup(e), { labelSelector: { [EXECUTOR_LABEL]: OPERATOR_EXECUTOR } });
    await this.informer.waitForSync();
    if (await this.serves(WARMUP_TYPE)) {
      this.warmups = this.options.client.watch(WARMUP_TYPE, '*', (e) => this.onWarmup(e), { labelSelector: { [EXECUTOR_LABEL]: OPERATOR_EXECUTOR } });
      await this.warmups.waitForSync();
    }
    // v1alpha1 roles run as StatefulSets (RBG v0.6.0), whose group status v0.6.0 writes even more rarely.
    const workloadType = type === RBG_V1ALPHA1_TYPE ? STATEFUL_SET_TYPE : ROLE_INSTANCE_SET_TYPE;
    if (this.options.readWorkloads !== false && (await this.serves(workloadType))) {
      this.workloads = this.options.client.watch(workloadType, '*', (e) => this.onWorkload(e));
      await this.workloads.waitForSync();
    }
    // Only the routes the construct labels as a group's router route: the server filters the rest out.
    if (await this.serves(HTTPROUTE)) {
      this.routes = this.options.client.watch(HTTPROUTE, '*', (e) => this.onRouterObject(e, routeUnchanged), { labelSelector: ROUTER_FOR_LABEL });
      await this.routes.waitForSync();
      this.routers = this.options.client.watch(DEPLOYMENT_TYPE, '*', (e) => this.onRouterObject(e, routerUnchanged), { labelSelector: ROUTER_FOR_LABEL });
      await this.routers.waitForSync();
    }
    this.options.log.info({ apiVersion: type.apiVersion, warmups: this.warmups !== undefined, workloads: this.workloads !== undefined, routes: this.routes !== undefined }, 'watching RoleBasedGroups executed by the operator');
  }

  /** True once started and the watch (if any) has synced (readiness). */
  ready(): boolean {
    return this.started && (this.informer?.hasSynced() ?? true) && (this.warmups?.hasSynced() ?? true) && (this.workloads?.hasSynced() ?? true) && (this.routes?.hasSynced() ?? true) && (this.routers?.hasSynced() ?? true);
  }

  /** Stops watching; reconciles in flight finish first. */
  async stop(): Promise<void> {
    this.informer?.stop();
    this.warmups?.stop();
    this.workloads?.stop();
    this.routes?.stop();
    this.routers?.stop();
    await this.queue.stop();
  }

  /** Resolves when no reconcile is queued or running (tests, shutdown). */
  idle(): Promise<void> {
    return this.queue.idle();
  }

  private async servedType(): Promise<RbgResourceType | undefined> {
    const candidates: RbgResourceType[] =
      this.options.apiVersion === 'v1alpha1' ? [RBG_V1ALPHA1_TYPE] : this.options.apiVersion === 'v1alpha2' ? [RBG_V1ALPHA2_TYPE] : [RBG_V1ALPHA2_TYPE, RBG_V1ALPHA1_TYPE];
    for (const t of candidates) if (await this.serves(t)) return t;
    return undefined;
  }

  /** True when the API server serves `type` (its CRD is installed). */
  private async serves(type: { apiVersion: string; plural: string }): Promise<boolean> {
    try {
      const list = await this.options.client.request<{ resources?: { name: string }[] }>('GET', `/apis/${type.apiVersion}`);
      return (list.resources ?? []).some((r) => r.name === type.plural);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      return false;
    }
  }

  /** A warmup changed (its status) or went away (a failed one deleted to retry): its group's gate may open. */
  private onWarmup(e: InformerEvent): void {
    const group = e.object.metadata.labels?.[WARMUP_GROUP_LABEL];
    if (group !== undefined) this.queue.add(`${e.object.metadata.namespace}/${group}`);
  }

  /** A workload changed: its owning group, when the operator executes it, may have progressed. */
  private onWorkload(e: InformerEvent): void {
    const owner = (e.object.metadata.ownerReferences ?? []).find((o) => o.controller && o.kind === 'RoleBasedGroup');
    const namespace = e.object.metadata.namespace;
    if (owner && namespace && this.informer?.get(owner.name, namespace)) this.queue.add(`${namespace}/${owner.name}`);
  }

  /**
   * A router route or a router Deployment changed: its group, when the operator executes it, wakes
   * to re-derive the weights or to see a router it waits for become ready. Only a change that
   * `unchanged` does not dismiss wakes it (for a route, its spec or labels, not the Gateway's status
   * conditions; for a Deployment, its replicas or readiness); the operator's own writes wake one pass,
   * which finds nothing to write.
   */
  private onRouterObject(e: InformerEvent, unchanged: (before: KubeObject, after: KubeObject) => boolean): void {
    const group = e.object.metadata.labels?.[ROUTER_FOR_LABEL];
    const namespace = e.object.metadata.namespace;
    if (group === undefined || !namespace || !this.informer?.get(group, namespace)) return;
    if (e.type === 'update' && e.oldObject && !e.resync && unchanged(e.oldObject, e.object)) return;
    this.queue.add(`${namespace}/${group}`);
  }

  /** Queues every group of `shard` (a sharded operator's replica now holds it). */
  claim(shard: number): void {
    if (!this.options.shards) return;
    for (const key of keysInShard(this.options.shards, this.informer?.list() ?? [], shard)) this.queue.add(key);
  }

  /** Resolves once no group of `shard` is being reconciled; its metrics are dropped (its next holder reports them). */
  async drain(shard: number): Promise<void> {
    const shards = this.options.shards;
    if (!shards) return;
    await this.queue.settled((key) => shardOfKey(shards, key) === shard);
    for (const key of keysInShard(shards, this.informer?.list() ?? [], shard)) this.metrics.forget(...(key.split('/') as [string, string]));
  }

  private async reconcile(key: string): Promise<void> {
    const [namespace, name] = key.split('/');
    if (this.options.shards && !this.options.shards.owns(namespace, name)) return; // another replica's (or nobody's until a Lease moves)
    const result = await this.reconciler!.reconcile(namespace, name);
    if (result.status) {
      const deadlines = result.events.filter((e) => e.reason === 'ProgressDeadlineExceeded').length;
      this.metrics.observe(namespace, name, result.status, { rounds: result.rounds, deadlines });
    }
    if (result.requeueAt !== undefined) this.queue.addAt(key, result.requeueAt);
  }

  private onGroup(e: InformerEvent): void {
    const o = e.object;
    const key = `${o.metadata.namespace}/${o.metadata.name}`;
    if (e.type === 'delete') {
      // Deleted, or no longer labelled for the operator (it left the watch's selector): in the
      // second case the reconciler hands the group back to its new executor.
      this.metrics.forget(String(o.metadata.namespace), String(o.metadata.name));
      if (readRolloutStatus(o) !== undefined) this.queue.add(key);
      return;
    }
    if (e.type === 'update' && e.oldObject && !e.resync && onlyOwnStatusChanged(e.oldObject, o)) return;
    this.queue.add(key);
  }
}

/** True when nothing but the executor's own status annotation changed (its writes of it must not wake it again). */
function onlyOwnStatusChanged(before: KubeObject, after: KubeObject): boolean {
  const strip = (o: KubeObject) => {
    const { [STATUS_ANNOTATION]: _own, ...annotations } = o.metadata.annotations ?? {};
    return JSON.stringify([o.metadata.generation, o.metadata.labels ?? {}, annotations, o.metadata.deletionTimestamp ?? null, o.status ?? null]);
  };
  return strip(before) === strip(after);
}

/** True when neither the route's spec nor its labels changed (a status update: the Gateway's conditions). */
function routeUnchanged(before: KubeObject, after: KubeObject): boolean {
  const of = (o: KubeObject) => JSON.stringify([o.metadata.labels ?? {}, o.spec ?? null]);
  return of(before) === of(after);
}

/** True when a router Deployment's replicas and readiness are as before. */
function routerUnchanged(before: KubeObject, after: KubeObject): boolean {
  const of = (o: KubeObject) => JSON.stringify([(o.spec as { replicas?: number } | undefined)?.replicas, (o.status as { readyReplicas?: number } | undefined)?.readyReplicas, (o.status as { observedGeneration?: number } | undefined)?.observedGeneration]);
  return of(before) === of(after);
}
