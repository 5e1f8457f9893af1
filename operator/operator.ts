/**
 * The rayshift operator: watches `rayshift.dev` RayServices and what they own, reconciles each
 * service on a keyed work queue (one worker per service at a time), and wakes each service at
 * the engine's exact due time. No `setInterval` drives steps: a restart resumes from the status
 * each service carries. Reconciles read from the watch caches (plus the operator's own writes), so
 * a traffic step costs two API calls: the status write and the route patch.
 */
import { KubeClient } from '../lib/runtime/kube/client';
import { Informer, InformerEvent, InformerOptions } from '../lib/runtime/kube/informer';
import { CachedObjectReader } from '../lib/runtime/kube/object-reader';
import { KubeObject, ResourceType } from '../lib/runtime/kube/types';
import { ReconcileLogger, RayServiceReconciler } from '../lib/runtime/rayservice/reconciler';
import {
  ENDPOINT_SLICE, GATEWAY, GRPCROUTE, HTTPROUTE, NODE_TYPE_LABEL, ORIGINATED_FROM_CRD, ORIGINATED_FROM_RAYSERVICE, POD, RAYCLUSTER, RAYSHIFT_RAYSERVICE, SERVICE, serviceGateway, serviceOfRoute,
} from '../lib/spec/object-names';
import type { RayServiceSpec, RouteKind } from '../lib/spec/rayservice';
import { ServeDashboardClient } from '../lib/runtime/serve/client';
import { kubeRayTokenSource } from '../lib/runtime/serve/kuberay-token';
import { DashboardResolver } from '../lib/runtime/serve/resolver';
import type { WorkQueue } from '../lib/runtime/work-queue';
import { RoutingView, controllingServiceKey, serviceOfHeadPod, serviceOfServeEndpoints } from './event-service';
import { reconcileQueue } from './reconcile-queue';
import { OperatorMetrics } from './metrics';
import { ConnectionPool } from '../lib/runtime/net/connection-pool';
import { OwnedShards, ShardedController, keysInShard, ownerRecord, shardOfKey } from './shards';

/** Options of an `Operator`. */
export interface OperatorOptions {
  /** Kubernetes access (the operator's own identity). */
  readonly client: KubeClient;
  /** Where each cluster's dashboard is (the default is KubeRay's in-cluster head Service). */
  readonly resolver: DashboardResolver;
  /** Services reconciled at once. @default 8 */
  readonly concurrency?: number;
  /** Poll period while waiting for Serve capacity, ms. @default 1000 */
  readonly capacityPollMs?: number;
  /** Logger. */
  readonly log: ReconcileLogger & { error(obj: object, msg: string): void };
  /** Metrics. @default a fresh registry */
  readonly metrics?: OperatorMetrics;
  /** The shards this replica works on (a sharded operator, operator/shards.ts). @default every service */
  readonly shards?: OwnedShards;
  /** This replica's identity (its Pod name), recorded as `status.owner` of the services it works on. @default none recorded */
  readonly identity?: string;
}

/** See the file comment. */
export class Operator implements ShardedController {
  /** Metrics of this operator. */
  readonly metrics: OperatorMetrics;
  private readonly reconciler: RayServiceReconciler;
  private readonly queue: WorkQueue;
  private readonly informers: Informer[];
  private readonly services: Informer;
  private readonly reader: CachedObjectReader;
  private readonly routing: RoutingView;
  private synced = false;
  private readonly shards?: OwnedShards;
  private readonly dashboards = new ConnectionPool();

  constructor(options: OperatorOptions) {
    this.shards = options.shards;
    this.metrics = options.metrics ?? new OperatorMetrics();
    const c = options.client;
    const owned = { labelSelector: { [ORIGINATED_FROM_CRD]: ORIGINATED_FROM_RAYSERVICE } };
    // Informers are made here and started by `start()`: an operator that is built but never started
    // (a standby replica before it leads, a test that does not run it) watches nothing.
    const informer = (type: ResourceType, handler: (e: InformerEvent) => void, opts: InformerOptions = {}) => new Informer(c, type, '*', handler, opts);
    this.services = informer(RAYSHIFT_RAYSERVICE, (e) => this.onService(e));
    const cached = [
      { type: RAYSHIFT_RAYSERVICE, informer: this.services },
      { type: RAYCLUSTER, informer: informer(RAYCLUSTER, (e) => this.onOwned(e), owned) },
      { type: SERVICE, informer: informer(SERVICE, (e) => this.onOwned(e), owned) },
      { type: HTTPROUTE, informer: informer(HTTPROUTE, (e) => this.onRoute(e, 'HTTP')) },
      { type: GRPCROUTE, informer: informer(GRPCROUTE, (e) => this.onRoute(e, 'GRPC')) },
      { type: GATEWAY, informer: informer(GATEWAY, (e) => this.onGateway(e)) },
      // Head Pods, whose serve label the operator keeps (KubeRay leaves it to a RayService controller).
      { type: POD, informer: informer(POD, (e) => this.onHeadPod(e), { labelSelector: { [NODE_TYPE_LABEL]: 'head' } }) },
      // The serve Services' EndpointSlices (kube-controller-manager copies the Services' labels onto them): traffic waits for a ready endpoint.
      { type: ENDPOINT_SLICE, informer: informer(ENDPOINT_SLICE, (e) => this.onServeEndpoints(e), owned) },
    ];
    this.informers = cached.map((x) => x.informer);
    const reader = new CachedObjectReader(c, cached);
    this.reader = reader;
    this.routing = { hasService: (namespace, name) => this.services.get(name, namespace) !== undefined, cluster: (namespace, name) => reader.tryGet(RAYCLUSTER, name, namespace) };
    this.reconciler = new RayServiceReconciler({
      client: c,
      // Clusters with Ray token auth get their token from KubeRay's Secret (needs the chart's `rayTokenAuth`).
      // One pool of keep-alive connections to the dashboards for every pass (lib/runtime/net/connection-pool.ts).
      serve: new ServeDashboardClient({ resolver: options.resolver, token: kubeRayTokenSource(reader), pool: this.dashboards }),
      capacityPollMs: options.capacityPollMs,
      log: options.log,
      reader,
      watchDriven: true,
      ownerOf: ownerRecord(options.identity, options.shards),
    });
    this.queue = reconcileQueue((key) => this.reconcile(key), { concurrency: options.concurrency ?? 8, errors: this.metrics.errors, log: options.log, keyField: 'rayservice', reachability: options.client.reachability });
  }

  /** Starts the watches and waits until their caches are synced. */
  async start(): Promise<void> {
    for (const i of this.informers) i.start();
    await Promise.all(this.informers.map((i) => i.waitForSync()));
    // Reconciles read from the caches, so none runs before every cache has synced: events of the
    // initial lists are dropped, and every service is queued once here instead.
    this.synced = true;
    for (const s of this.services.list()) this.queue.add(this.keyOf(s));
  }

  /** True once every watch has synced (readiness). */
  ready(): boolean {
    return this.informers.length > 0 && this.informers.every((i) => i.hasSynced());
  }

  /** Stops watching; reconciles in flight finish first. */
  async stop(): Promise<void> {
    for (const i of this.informers) i.stop();
    await this.queue.stop();
    this.dashboards.close();
  }

  /** Resolves when no reconcile is queued or running (tests, shutdown). */
  idle(): Promise<void> {
    return this.queue.idle();
  }

  /** Queues every service of `shard` (a sharded operator's replica now holds it). */
  claim(shard: number): void {
    if (!this.synced || !this.shards) return; // start() queues every service once synced
    for (const key of keysInShard(this.shards, this.services.list(), shard)) this.queue.add(key);
  }

  /** Resolves once no service of `shard` is being reconciled; its metrics are dropped (its next holder reports them). */
  async drain(shard: number): Promise<void> {
    const shards = this.shards;
    if (!shards) return;
    await this.queue.settled((key) => shardOfKey(shards, key) === shard);
    for (const key of keysInShard(shards, this.services.list(), shard)) this.metrics.forget(...(key.split('/') as [string, string]));
  }

  private async reconcile(key: string): Promise<void> {
    const [namespace, name] = key.split('/');
    if (this.shards && !this.shards.owns(namespace, name)) return; // another replica's (or nobody's until a Lease moves)
    const end = this.metrics.reconcileSeconds.startTimer();
    const before = this.services.get(name, namespace);
    try {
      const result = await this.reconciler.reconcile(namespace, name);
      const writtenAt = Date.now(); // the pass's writes (status, then the route patch) have landed
      this.metrics.writes.inc(result.writes);
      if (result.status) this.metrics.observe(namespace, name, result.status);
      else if (!before) this.metrics.forget(namespace, name);
      if (result.trafficStepDueAt !== undefined) {
        const lateness = writtenAt - result.trafficStepDueAt;
        if (lateness < 0) this.metrics.stepsEarly.inc();
        else this.metrics.stepLateness.observe(lateness / 1000);
      }
      if (result.requeueAt !== undefined) this.queue.addAt(key, result.requeueAt);
    } finally {
      end();
    }
  }

  private keyOf(o: KubeObject): string {
    return `${o.metadata.namespace}/${o.metadata.name}`;
  }

  private onService(e: InformerEvent): void {
    if (!this.synced) return;
    const o = e.object;
    if (e.type === 'update' && e.oldObject && !e.resync) {
      const a = e.oldObject.metadata;
      const b = o.metadata;
      const specChanged = a.generation !== b.generation;
      const metaChanged = JSON.stringify(a.annotations ?? {}) !== JSON.stringify(b.annotations ?? {}) || a.deletionTimestamp !== b.deletionTimestamp || JSON.stringify(a.finalizers ?? []) !== JSON.stringify(b.finalizers ?? []);
      if (!specChanged && !metaChanged) return; // our own status writes
    }
    if (e.type === 'delete') {
      this.metrics.forget(String(o.metadata.namespace), String(o.metadata.name));
      return;
    }
    this.queue.add(this.keyOf(o));
  }

  /** Events worth a reconcile: after the caches synced, and not the echo of the operator's own write. */
  private relevant(e: InformerEvent): boolean {
    return this.synced && !(e.type !== 'delete' && this.reader.isOwnWrite(e.object));
  }

  private onOwned(e: InformerEvent): void {
    if (!this.relevant(e)) return;
    const key = controllingServiceKey(e.object);
    if (key !== undefined) this.queue.add(key);
  }

  /** Queues the service `route` leads to (event-service.ts), once it is known. */
  private enqueueRouted(route: Promise<string | undefined>): void {
    void route.then((key) => {
      if (key !== undefined) this.queue.add(key);
    });
  }

  /** A head Pod changed (a new head starts with the serve label `false`): reconcile the RayService owning its RayCluster. */
  private onHeadPod(e: InformerEvent): void {
    if (this.relevant(e)) this.enqueueRouted(serviceOfHeadPod(e.object, this.routing));
  }

  /** A serve Service's endpoints changed: reconcile the RayService it serves. */
  private onServeEndpoints(e: InformerEvent): void {
    if (this.synced) this.enqueueRouted(serviceOfServeEndpoints(e.object, this.routing));
  }

  private onRoute(e: InformerEvent, kind: RouteKind): void {
    if (!this.relevant(e)) return;
    const service = serviceOfRoute(String(e.object.metadata.name), kind);
    if (service !== undefined && this.services.get(service, e.object.metadata.namespace)) this.queue.add(`${e.object.metadata.namespace}/${service}`);
  }

  private onGateway(e: InformerEvent): void {
    if (!this.synced) return;
    const ns = String(e.object.metadata.namespace);
    const name = String(e.object.metadata.name);
    for (const s of this.services.list()) {
      const gw = serviceGateway(String(s.metadata.name), String(s.metadata.namespace), (s.spec as RayServiceSpec | undefined)?.rayshift?.gatewayRef);
      if (gw.name === name && gw.namespace === ns) this.queue.add(this.keyOf(s));
    }
  }
}
