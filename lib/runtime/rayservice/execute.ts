/**
 * Carries out the steps of a RayService pass (`planPass`, lib/engine/rayservice-pass.ts): one
 * switch over the step types, each case one idempotent group of API or dashboard calls. Nothing
 * here decides what to do; a create of an object that exists is success, and the API writes made
 * are counted for the reconciler's result.
 */
import type { RayServiceDecision } from '../../engine/rayservice-engine';
import type { PassStep } from '../../engine/rayservice-pass';
import type { RouteBackend } from '../../engine/observation';
import type { RayServiceSpec } from '../../spec/rayservice';
import { GATEWAY, RAYCLUSTER, RAYSERVICE_EVENT_CONTROLLER, SERVE_CONFIG_ANNOTATION, SERVICE, perClusterServeService, serviceRouteName } from '../../spec/object-names';
import { isPatchConflict, isStatus } from '../kube/errors';
import { jsonPointer } from '../kube/json-pointer';
import type { JsonPatchOp } from '../kube/request-options';
import { recordEvents, type EventSource } from '../kube/events';
import { ObjectReader } from '../kube/object-reader';
import { KubeObject } from '../kube/types';
import { PendingMeasurements } from '../prometheus/measure';
import { buildServiceRoute, clusterBackends } from '../route/build';
import { kubeRouteClient, writeRouteWeights } from '../route/weight-patch';
import { labelHeadPods } from './head-serve-label';
import { ownsBackend, routeTypeOf } from './observe';
import type { RayServiceKube, RayServiceServe } from './ports';
import { buildGateway, buildPerClusterServeService, buildRayCluster, buildStableServices, servePort } from './resources';
import type { RayServiceStore } from './store';
import { freeWorkersPatch, restoreWorkerFloorsPatch } from './worker-freeing';

/** The Events of the analysis (and of the capacity preflight, whose events name their own action). */
const RAYSERVICE_EVENTS: EventSource = { controller: RAYSERVICE_EVENT_CONTROLLER, action: 'Analysis' };
const SERVE_PUT_TIMEOUT_MS = 30_000;

/** What an executor calls through. */
export interface RayServiceExecutorOptions {
  readonly client: RayServiceKube;
  readonly serve: RayServiceServe;
  readonly reader: ObjectReader;
  readonly store: RayServiceStore;
  readonly measured: PendingMeasurements;
  readonly now: () => number;
  readonly warn: (obj: object, msg: string) => void;
}

/** The service a pass is about, and what its steps read of it. */
export interface PassTarget {
  readonly svc: KubeObject;
  readonly spec: RayServiceSpec;
  readonly decision: RayServiceDecision;
  /** The route as the pass observed it: the weight patch plans against it first. */
  readonly route?: KubeObject;
}

/** See the file comment. */
export class RayServiceExecutor {
  constructor(private readonly o: RayServiceExecutorOptions) {}

  /** Carries out one step; returns the number of API writes it made. */
  async run(t: PassTarget, step: PassStep): Promise<number> {
    const { svc, spec } = t;
    const namespace = String(svc.metadata.namespace);
    const key = `${namespace}/${String(svc.metadata.name)}`;
    switch (step.type) {
      case 'createPendingCluster':
        await this.createIfAbsent(buildRayCluster(svc, this.o.store.ownerReference(svc), spec, step));
        return 1;
      case 'ensureServeService':
        return this.ensureServeService(namespace, spec, step.cluster);
      case 'ensureGateway':
        return this.ensureGateway(svc, spec);
      case 'createRoute':
        await this.createIfAbsent(buildServiceRoute({
          rayServiceName: String(svc.metadata.name),
          namespace,
          routeKind: spec.rayshift?.routeKind ?? 'HTTP',
          ...(spec.rayshift?.gatewayRef ? { gatewayRef: spec.rayshift.gatewayRef } : {}),
          backends: step.backends,
          port: servePort(spec),
          ownerReferences: [this.o.store.ownerReference(svc)],
        }) as KubeObject);
        return 1;
      case 'patchRouteWeights':
        return this.patchRouteWeights(t, step.backends);
      case 'putServeConfig':
        await this.o.serve.putServeConfig({ namespace, name: step.clusterName }, step.config, step.percent === 100 ? null : step.percent, { timeoutMs: SERVE_PUT_TIMEOUT_MS });
        if (!step.record) return 0;
        this.o.reader.wrote(await this.o.client.patchMerge(RAYCLUSTER, step.clusterName, namespace, { metadata: { annotations: { [SERVE_CONFIG_ANNOTATION]: step.config } } }));
        return 1;
      case 'promote':
        for (const s of buildStableServices(svc, this.o.store.ownerReference(svc), spec, step.cluster)) this.o.reader.wrote(await this.o.client.apply(s, { force: true }));
        return 2;
      case 'deleteCluster':
        await this.o.client.delete(RAYCLUSTER, step.name, namespace, { propagationPolicy: 'Background', ignoreNotFound: true });
        this.o.reader.deleted(RAYCLUSTER, step.name, namespace);
        await this.o.client.delete(SERVICE, perClusterServeService(step.name), namespace, { ignoreNotFound: true });
        this.o.reader.deleted(SERVICE, perClusterServeService(step.name), namespace);
        return 2;
      case 'measureAnalysis':
        await this.o.measured.measure(key, [step]);
        return 0;
      case 'recordEvents':
        // First in the pass, after the status that holds them was written (or held, to be written with the next pass): each verdict's Event once.
        return recordEvents(this.o.client, svc, t.decision.events, this.o.now(), RAYSERVICE_EVENTS, (err) => this.o.warn({ rayservice: key, err: (err as Error).message }, 'recording an Event failed'));
      case 'setHeadServeLabel':
        return labelHeadPods(this.o.client, this.o.reader, namespace, step.cluster, step.value);
      case 'freeWorkers':
        return this.patchWorkers(namespace, step.clusterName, freeWorkersPatch(step));
      case 'restoreWorkerFloors':
        return this.patchWorkers(namespace, step.clusterName, restoreWorkerFloorsPatch(step));
      case 'clearSteering':
        await this.o.store.patchMetadata(svc, step.annotations.map((a) => ({ op: 'remove' as const, path: jsonPointer('metadata', 'annotations', a) })));
        return 1;
    }
  }

  /**
   * A guarded patch of a cluster's worker groups (a freeing, or its floors given back). A refused
   * `test` writes nothing: the next pass reads the groups again and the engine decides again.
   */
  private async patchWorkers(namespace: string, clusterName: string, ops: JsonPatchOp[]): Promise<number> {
    try {
      this.o.reader.wrote(await this.o.client.patchJson(RAYCLUSTER, clusterName, namespace, ops));
      return 1;
    } catch (err) {
      if (!isPatchConflict(err)) throw err;
      this.o.warn({ cluster: `${namespace}/${clusterName}`, err: (err as Error).message }, 'worker groups patch refused: they changed since they were read');
      return 0;
    }
  }

  /** A JSON patch of the route's managed weights; a stale read fails its `test` ops and the writer re-reads. */
  private async patchRouteWeights(t: PassTarget, backends: readonly RouteBackend[]): Promise<number> {
    const namespace = String(t.svc.metadata.namespace);
    const routeType = routeTypeOf(t.spec);
    const routeName = serviceRouteName(String(t.svc.metadata.name), t.spec.rayshift?.routeKind);
    const result = await writeRouteWeights(
      kubeRouteClient(this.o.client, t.route),
      { kind: routeType.kind, namespace, name: routeName },
      clusterBackends(namespace, backends, servePort(t.spec)),
      { owns: ownsBackend(t.svc) },
    );
    if (result.ops.length === 0) return 0;
    this.o.reader.wrote(result.route as KubeObject);
    return 1;
  }

  private async ensureGateway(svc: KubeObject, spec: RayServiceSpec): Promise<number> {
    const gateway = buildGateway(svc, this.o.store.ownerReference(svc), spec.upgradeStrategy?.clusterUpgradeOptions?.gatewayClassName ?? '');
    if (await this.o.reader.tryGet(GATEWAY, String(gateway.metadata.name), String(gateway.metadata.namespace))) return 0;
    await this.createIfAbsent(gateway);
    return 1;
  }

  /** `<cluster>-serve-svc`, owned by its RayCluster: none when that is gone or going. */
  private async ensureServeService(namespace: string, spec: RayServiceSpec, clusterName: string): Promise<number> {
    if (await this.o.reader.tryGet(SERVICE, perClusterServeService(clusterName), namespace)) return 0;
    const cluster = await this.o.reader.tryGet(RAYCLUSTER, clusterName, namespace);
    if (!cluster || cluster.metadata.deletionTimestamp) return 0;
    await this.createIfAbsent(buildPerClusterServeService(cluster, spec));
    return 1;
  }

  private async createIfAbsent(obj: KubeObject): Promise<void> {
    try {
      this.o.reader.wrote(await this.o.client.create(obj));
    } catch (err) {
      if (!isStatus(err, 409)) throw err;
    }
  }
}
