/**
 * What a reconcile pass observes of a RayService: its owned RayClusters (head readiness, spec hash,
 * and Serve's state read over the dashboard's REST API), the serving Service, the route's weights
 * and readiness, and the steering requests, as the engine's `RayServiceObservation`. Reads only.
 */
import { clusterSpecHash } from '../../engine/cluster-hash';
import { ObservedCluster, ObservedRoute, RayServiceObservation } from '../../engine/observation';
import { RayServiceStatus } from '../../engine/status';
import { RayServiceSpec, type ResolvedUpgradeOptions } from '../../spec/rayservice';
import { needsCapacityPreflight } from '../../engine/capacity-policy';
import { preflightUpgrade } from '../../engine/capacity-demand';
import type { CapacityUnread, CapacityVerdict } from '../../engine/capacity-preflight';
import { listCapacity } from '../capacity';
import { needsSurgeScheduling, surgeSchedulingOf, type SurgeScheduling } from '../../engine/surge-scheduling';
import { needsWorkerObservation, type ObservedWorkers } from '../../engine/worker-freeing';
import type { ServeInstanceDetails } from '../serve/types';
import type { WorkerFloor } from '../../engine/actions';
import { workerFloorsOf, workersOf } from './worker-freeing';
import { asArray, asObject } from '../../spec/read';
import { Condition, isConditionTrue } from '../kube/conditions';
import { KnownTypes, KubeObject } from '../kube/types';
import { ObjectReader } from '../kube/object-reader';
import { managedRuleIndices } from '../route/weight-patch';
import { routeReadiness } from '../route/readiness';
import type { RayServiceKube, RayServiceServe } from './ports';
import { observeServe } from '../serve/readiness';
import { observeServeEndpoints } from './serve-endpoints';
import { CLUSTER_LABEL, NODE_TYPE_LABEL, GATEWAY, GRPCROUTE, HTTPROUTE, ORIGINATED_FROM_NAME, RAYCLUSTER, SERVE_CONFIG_ANNOTATION, SERVICE, SPEC_HASH_ANNOTATION, clusterOfServeService, isClusterServeServiceOf, perClusterServeService, routeTypeOfKind, serviceGateway, serviceRouteName, stableServeService } from '../../spec/object-names';
import { ABORT_ANNOTATION, ANALYSIS_OVERRIDE_ANNOTATION, PROMOTE_ANNOTATION, analysisOverrideOf, isPaused } from '../../engine/steering';
import type { RayServiceStore } from './store';

/** The logger an observer reports unanswered dashboards and unreadable capacity to. */
interface DebugLogger {
  debug(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** What an observer reads through. */
export interface RayServiceObserverOptions {
  readonly client: Pick<RayServiceKube, 'list'>;
  readonly serve: Pick<RayServiceServe, 'getServeDetails'>;
  readonly reader: ObjectReader;
  readonly store: RayServiceStore;
  readonly log: DebugLogger;
  /** The clock, for an Unschedulable condition without a time. @default Date.now */
  readonly now?: () => number;
}

/** The route object type of a spec's `routeKind`. */
export function routeTypeOf(spec: RayServiceSpec): typeof HTTPROUTE | typeof GRPCROUTE {
  return routeTypeOfKind(spec.rayshift?.routeKind);
}

/** Backends that are the per-cluster serve Services of this service's clusters (`<name>-xxxxx-serve-svc`). */
export function ownsBackend(svc: KubeObject): (b: { name: string; namespace?: string }) => boolean {
  const service = String(svc.metadata.name);
  return (b) => isClusterServeServiceOf(service, b.name) && (b.namespace === undefined || b.namespace === svc.metadata.namespace);
}

/** Reads a RayService's world for the engine (see the file comment). */
export class RayServiceObserver {
  private readonly client: Pick<RayServiceKube, 'list'>;
  private readonly serve: Pick<RayServiceServe, 'getServeDetails'>;
  private readonly reader: ObjectReader;
  private readonly store: RayServiceStore;
  private readonly now: () => number;
  private readonly log: DebugLogger;

  constructor(options: RayServiceObserverOptions) {
    this.client = options.client;
    this.serve = options.serve;
    this.reader = options.reader;
    this.store = options.store;
    this.log = options.log;
    this.now = options.now ?? Date.now;
  }

  /**
   * Everything the engine needs, read fresh from the API server and the clusters' dashboards, plus
   * the route object as read (`routeObject`: a weight patch plans against it first). The route is
   * read when `routeManaged` (`routeManagedFor` of the spec's and the stored status' strategies);
   * the cluster's capacity when the engine's next run would start an upgrade (`needsCapacityPreflight`);
   * the pending cluster's Pods while the upgrade waits on that cluster or Unschedulable Pods are on record (`needsSurgeScheduling`).
   */
  async observe(svc: KubeObject, spec: RayServiceSpec, routeManaged: boolean, options: ResolvedUpgradeOptions): Promise<RayServiceObservation & { routeObject?: KubeObject }> {
    const namespace = String(svc.metadata.namespace);
    const name = String(svc.metadata.name);
    const annotations = svc.metadata.annotations ?? {};
    const owner = this.store.ownerReference(svc);
    const ownedBy = (list: KubeObject[]) => list.filter((c) => (c.metadata.ownerReferences ?? []).some((o) => o.uid === owner.uid && o.controller));
    let owned = ownedBy(await this.reader.list(RAYCLUSTER, namespace, { [ORIGINATED_FROM_NAME]: name }));
    // A cluster the status names but the read does not show is confirmed with the API server: a
    // cache that lags (a restart, a watch gap) must never make a serving cluster look gone.
    const engineState = asObject(asObject(svc.status).engineState) as Partial<RayServiceStatus>;
    const named = [engineState.activeClusterName, engineState.pendingClusterName].filter((n): n is string => n !== undefined);
    if (named.some((n) => !owned.some((c) => c.metadata.name === n))) {
      owned = ownedBy((await this.client.list(RAYCLUSTER, { namespace, labelSelector: { [ORIGINATED_FROM_NAME]: name } })).items);
    }
    const withWorkers = needsWorkerObservation(engineState);
    const clusters = await Promise.all(owned.map((c) => this.observeCluster(c, withWorkers)));
    const serving = await this.reader.tryGet(SERVICE, stableServeService(name), namespace);
    const override = analysisOverrideOf(annotations[ANALYSIS_OVERRIDE_ANNOTATION]);
    const routeObject = routeManaged ? await this.reader.tryGet(routeTypeOf(spec), serviceRouteName(name, spec.rayshift?.routeKind), namespace) : undefined;
    const goalSpecHash = clusterSpecHash(spec.rayClusterConfig as never);
    const capacity = needsCapacityPreflight(engineState, goalSpecHash, clusters, options.strategy) ? await this.observeCapacity(namespace, name, spec, options, engineState.activeClusterName) : undefined;
    const surgeScheduling = needsSurgeScheduling(engineState) ? await this.observeSurge(namespace, name, engineState.pendingClusterName!) : undefined;
    return {
      ...(routeObject ? { routeObject } : {}),
      name,
      namespace,
      goalSpecHash,
      clusters,
      ...(capacity !== undefined ? { capacity } : {}),
      ...(surgeScheduling !== undefined ? { surgeScheduling } : {}),
      ...(routeObject ? { route: await this.observeRoute(svc, spec, routeObject, clusters.map((c) => c.name)) } : {}),
      servingCluster: serving ? (asObject(asObject(serving.spec).selector)[CLUSTER_LABEL] as string | undefined) : undefined,
      controls: {
        paused: isPaused(spec, annotations),
        promoteNow: annotations[PROMOTE_ANNOTATION] === 'true',
        abort: annotations[ABORT_ANNOTATION] === 'true',
        ...(override !== undefined ? { analysisOverride: override } : {}),
      },
      status: asObject(svc.status).engineState as RayServiceStatus | undefined,
    };
  }

  /** The pending cluster's Unschedulable Pods; undefined (nothing reported) when there are none or they cannot be listed. */
  private async observeSurge(namespace: string, name: string, pending: string): Promise<SurgeScheduling | undefined> {
    try {
      const pods = await this.client.list(KnownTypes.Pod, { namespace, labelSelector: { [CLUSTER_LABEL]: pending } });
      return surgeSchedulingOf(pods.items, this.now());
    } catch (err) {
      this.log.warn({ rayservice: `${namespace}/${name}`, err: (err as Error).message }, 'surge scheduling not read: the pending cluster\'s Pods could not be listed');
      return undefined;
    }
  }

  /** The preflight of the upgrade to `spec` (undefined when no Node is visible); `unread` (the capacity policy decides) when the cluster cannot be read. */
  private async observeCapacity(namespace: string, name: string, spec: RayServiceSpec, options: ResolvedUpgradeOptions, active: string | undefined): Promise<CapacityVerdict | CapacityUnread | undefined> {
    try {
      return preflightUpgrade(spec.rayClusterConfig, options, await listCapacity(this.client, namespace), active);
    } catch (err) {
      this.log.warn({ rayservice: `${namespace}/${name}`, err: (err as Error).message }, 'capacity preflight: the cluster could not be read');
      return { unread: (err as Error).message };
    }
  }

  /** One cluster; with `withWorkers`, also its workers and where Serve runs on them (`workersOf`). */
  async observeCluster(cluster: KubeObject, withWorkers = false): Promise<ObservedCluster> {
    const name = String(cluster.metadata.name);
    const applied = cluster.metadata.annotations?.[SERVE_CONFIG_ANNOTATION];
    const base = {
      name,
      ...(applied !== undefined ? { appliedServeConfig: applied } : {}),
      specHash: cluster.metadata.annotations?.[SPEC_HASH_ANNOTATION] ?? '',
      headReady: isConditionTrue(asArray(asObject(cluster.status).conditions) as Condition[], 'HeadPodReady'),
      ...floorsField(cluster),
    };
    if (!base.headReady || cluster.metadata.deletionTimestamp) return { ...base, appsRunning: false, readyReplicas: 0, targetReplicas: 0 };
    const endpoints = await observeServeEndpoints(this.reader, String(cluster.metadata.namespace), perClusterServeService(name));
    const withEndpoints = endpoints === undefined ? base : { ...base, serveEndpoints: endpoints };
    try {
      const details = await this.serve.getServeDetails({ namespace: String(cluster.metadata.namespace), name });
      const workers = withWorkers ? await this.observeWorkers(cluster, details) : undefined;
      return { ...withEndpoints, ...observeServe(details), ...(workers !== undefined ? { workers } : {}) };
    } catch (err) {
      this.log.debug({ cluster: name, err: (err as Error).message }, 'Serve API not answering');
      return { ...withEndpoints, appsRunning: false, readyReplicas: 0, targetReplicas: 0 };
    }
  }

  /** The cluster's workers (a fresh list: a lagging cache could hide a Pod still holding its node); undefined when they cannot be listed. */
  private async observeWorkers(cluster: KubeObject, details: ServeInstanceDetails): Promise<ObservedWorkers | undefined> {
    const name = String(cluster.metadata.name);
    try {
      const pods = await this.client.list(KnownTypes.Pod, { namespace: String(cluster.metadata.namespace), labelSelector: { [CLUSTER_LABEL]: name, [NODE_TYPE_LABEL]: 'worker' } });
      return workersOf(cluster, pods.items, details);
    } catch (err) {
      this.log.warn({ cluster: name, err: (err as Error).message }, 'workers not read: the cluster\'s worker Pods could not be listed');
      return undefined;
    }
  }

  async observeRoute(svc: KubeObject, spec: RayServiceSpec, route: KubeObject, clusterNames: string[]): Promise<ObservedRoute> {
    const namespace = String(svc.metadata.namespace);
    const byService = new Map(clusterNames.map((c) => [perClusterServeService(c), c]));
    const rule = managedRuleIndices(route, clusterNames.map((c) => ({ name: perClusterServeService(c), namespace })), { owns: ownsBackend(svc) })[0];
    const refs = rule === undefined ? [] : asArray(asObject(asArray(asObject(route.spec).rules)[rule]).backendRefs).map(asObject);
    const backends = refs
      .filter((b) => byService.has(String(b.name)) || ownsBackend(svc)({ name: String(b.name), namespace: b.namespace as string | undefined }))
      .map((b) => ({ cluster: byService.get(String(b.name)) ?? clusterOfServeService(String(b.name)), weight: typeof b.weight === 'number' ? b.weight : 1 }));
    const gw = serviceGateway(String(svc.metadata.name), namespace, spec.rayshift?.gatewayRef);
    const gateway = await this.reader.tryGet(GATEWAY, gw.name, gw.namespace);
    return { backends, ready: gateway !== undefined && routeReadiness(route, gateway).ready };
  }
}

function floorsField(cluster: KubeObject): { workerFloors?: WorkerFloor[] } {
  const floors = workerFloorsOf(cluster);
  return floors === undefined ? {} : { workerFloors: floors };
}
