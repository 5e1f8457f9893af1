/**
 * The RayService reconciler: the one place that turns observed objects into engine input and
 * engine actions into API and dashboard calls, for `rayshift.dev/v1alpha1` RayServices. The
 * engine decides; this file only reads, writes and reports. Order of a pass: read everything,
 * run the engine, persist its status (the intent) through the status subresource, then carry out
 * its actions. A crash between any two calls is safe: every action is idempotent and the engine
 * re-derives what is left from what it observes next time.
 */
import { resolveUpgradeOptions } from '../../spec/rayservice';
import { ObservedCluster } from '../../engine/observation';
import { MeasureAnalysisAction, RayServiceAction } from '../../engine/actions';
import { nextRayService, RayServiceDecision } from '../../engine/rayservice-engine';
import { RayServiceStatus } from '../../engine/status';
import { canonicalJson } from '../../spec/canonical-json';
import { finalizationActions, inPlaceServeConfig, nextAttentionAt, serveConfigForCapacity, statusWrite, trafficStepDueAt } from '../../engine/pass-rules';
import { spentSteeringAnnotations } from '../../engine/steering';
import { RayServiceSpec, validateRayService } from '../../spec/rayservice';
import { asArray, asObject } from '../../spec/read';
import { formatProblem } from '../../spec/problem';
import { Condition, mergeConditions } from '../kube/conditions';
import { isStatus } from '../kube/errors';
import { KubeObject } from '../kube/types';
import { ObjectReader, apiReader } from '../kube/object-reader';
import { RayServiceStore, rayshiftServiceStore } from './store';
import { RayServiceObserver, gatewayOf, ownsBackend, routeTypeOf } from './observe';
import { buildServiceRoute, clusterBackends } from '../route/build';
import { RoutePlanError } from '../route/plan';
import { RouteClient, writeRouteWeights } from '../route/writer';
import { RayServiceKube, RayServiceServe } from './ports';
import { PendingMeasurements } from '../prometheus/measure';
import { recordEvents, type EventSource } from '../kube/events';
import { FINALIZER, GATEWAY, RAYCLUSTER, RAYSERVICE_EVENT_CONTROLLER, SERVE_CONFIG_ANNOTATION, SERVICE, perClusterServeService, serviceRouteName } from '../../spec/object-names';
import { buildGateway, buildPerClusterServeService, buildRayCluster, buildStableServices, servePort } from './resources';
import { renderInvalidStatus, renderStatus, sameServeReplicas } from './status';
import { syncHeadServeLabels } from './head-serve-label';
import { SERVING_SPEC_FIELD, ServingSpec, nextServingSpec, servingSpecIn } from './serving-spec';

/** Structured logger (pino-compatible subset). */
export interface ReconcileLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

/** What a pass did, for metrics and the caller's scheduling. */
export interface ReconcileResult {
  /** Run again at this time (epoch ms): the engine's due time, or sooner while waiting on Serve. */
  readonly requeueAt?: number;
  /** The engine's status after the pass (undefined when the service is gone or invalid). */
  readonly status?: RayServiceStatus;
  /** Actions carried out. */
  readonly actions: readonly RayServiceAction[];
  /** Events recorded (analysis verdicts). */
  readonly events?: RayServiceDecision['events'];
  /** When the traffic step this pass took was due (epoch ms; see `trafficStepDueAt`). */
  readonly trafficStepDueAt?: number;
  /** API writes made (status, objects, route patches; dashboard calls excluded). */
  readonly writes: number;
}

/** Dependencies and settings of a `RayServiceReconciler`. */
export interface RayServiceReconcilerOptions {
  /** Kubernetes access (a `KubeClient`). */
  readonly client: RayServiceKube;
  /** Ray dashboard access (a `ServeDashboardClient`, whose resolver decides the only addresses called). */
  readonly serve: RayServiceServe;
  /** The clock. @default Date.now */
  readonly now?: () => number;
  /** Poll period while waiting for Serve capacity, which cannot be watched, ms. @default 1000 */
  readonly capacityPollMs?: number;
  /** Logger. @default silent */
  readonly log?: ReconcileLogger;
  /** Where objects are read from (an operator passes its watch caches). @default the API server */
  readonly reader?: ObjectReader;
  /** Where the service's spec and status live. @default `rayshift.dev/v1alpha1` RayServices (through `reader`) */
  readonly store?: RayServiceStore;
  /**
   * The caller runs the reconciler again on watch events of the objects it writes (an operator),
   * so a pass whose actions all have watchable effects does not ask to run again at once.
   * @default false (run again at once after any action)
   */
  readonly watchDriven?: boolean;
}

/** The Events of the analysis. */
const RAYSERVICE_EVENTS: EventSource = { controller: RAYSERVICE_EVENT_CONTROLLER, action: 'Analysis' };

const SILENT: ReconcileLogger = { info: () => undefined, warn: () => undefined, debug: () => undefined };
const SERVE_PUT_TIMEOUT_MS = 30_000;

/** An engine status computed but not written yet, and the stored engine state it was computed from. */
interface UnwrittenStatus {
  readonly basis: string;
  readonly status: RayServiceStatus;
}

/** See the file comment. */
export class RayServiceReconciler {
  private readonly client: RayServiceKube;
  private readonly serve: RayServiceServe;
  private readonly now: () => number;
  private readonly pollMs: number;
  private readonly log: ReconcileLogger;
  private readonly reader: ObjectReader;
  private readonly store: RayServiceStore;
  private readonly watchDriven: boolean;
  private readonly unwritten = new Map<string, UnwrittenStatus>();
  /** The engine status this process last wrote (or found stored and unchanged), per service. */
  private readonly written = new Map<string, string>();
  private readonly observer: RayServiceObserver;
  /** Analysis measurements taken and not yet handed to the engine, per service. */
  private readonly measured: PendingMeasurements;

  constructor(options: RayServiceReconcilerOptions) {
    this.client = options.client;
    this.serve = options.serve;
    this.now = options.now ?? Date.now;
    this.pollMs = options.capacityPollMs ?? 1000;
    this.log = options.log ?? SILENT;
    this.reader = options.reader ?? apiReader(options.client);
    this.store = options.store ?? rayshiftServiceStore(options.client, this.reader);
    this.watchDriven = options.watchDriven ?? false;
    this.measured = new PendingMeasurements(this.now, (key, action, error) => this.log.warn({ rayservice: key, metric: action.metric, run: action.runId, error }, 'analysis query failed'));
    this.observer = new RayServiceObserver({ client: this.client, serve: this.serve, reader: this.reader, store: this.store, log: this.log });
  }

  /** One pass over the RayService `namespace/name`. */
  async reconcile(namespace: string, name: string): Promise<ReconcileResult> {
    const key = `${namespace}/${name}`;
    const svc = await this.store.get(namespace, name);
    if (!svc) {
      this.unwritten.delete(key);
      this.written.delete(key);
      this.measured.takeAll(key);
      return { actions: [], writes: 0 };
    }
    if (svc.metadata.deletionTimestamp) return this.finalize(svc);
    let writes = 0;
    if (this.store.usesFinalizer && !(svc.metadata.finalizers ?? []).includes(FINALIZER)) {
      await this.store.patchMetadata(svc, [
        { op: 'test', path: '/metadata/resourceVersion', value: svc.metadata.resourceVersion },
        { op: 'add', path: '/metadata/finalizers', value: [...(svc.metadata.finalizers ?? []), FINALIZER] },
      ]);
      writes++;
    }
    const generation = svc.metadata.generation ?? 0;
    const status = asObject(svc.status);
    const conditions = asArray(status.conditions) as Condition[];
    const validation = validateRayService(svc);
    if (validation.errors.length > 0) {
      const message = validation.errors.map(formatProblem).join('; ');
      const body = withServingSpec(renderInvalidStatus(message, generation, conditions, status.engineState, new Date(this.now())), servingSpecIn(status));
      if (await this.writeStatus(svc, body)) writes++;
      this.log.warn({ rayservice: `${namespace}/${name}`, message }, 'spec rejected');
      return { actions: [], writes };
    }
    const spec = svc.spec as unknown as RayServiceSpec;
    const options = resolveUpgradeOptions(spec);
    const observation = await this.observer.observe(svc, spec, options.strategy === 'NewClusterWithIncrementalUpgrade');
    const stored = observation.status;
    const basis = canonicalJson(stored ?? null);
    const held = this.unwritten.get(key);
    const now = this.now();
    const previous = held?.basis === basis ? held.status : stored;
    const measurements = this.measured.takeAll(key);
    const decision = nextRayService({ ...observation, status: previous, ...(measurements ? { measurements } : {}) }, options, now);
    const servingSpec = nextServingSpec(status, spec, decision.status, observation.goalSpecHash, observation.clusters);
    const body = withServingSpec(renderStatus(decision.status, generation, conditions, new Date(now), observation.clusters), servingSpec);
    const deferred = statusWrite(decision, stored, this.written.get(key) === basis, now) === 'hold' && sameServeReplicas(asObject(svc.status), body);
    if (deferred) {
      this.unwritten.set(key, { basis, status: decision.status });
    } else {
      this.unwritten.delete(key);
      if (await this.writeStatus(svc, body)) writes++;
      this.written.set(key, canonicalJson(decision.status));
    }
    const clusters = new Map(observation.owned.map((c) => [String(c.metadata.name), c]));
    try {
      for (const action of decision.actions) {
        if (action.type === 'measureAnalysis') await this.measured.measure(key, [action]);
        else writes += await this.execute(svc, spec, action, decision, clusters);
      }
    } catch (err) {
      if (err instanceof RoutePlanError) await this.reportRouteProblem(svc, body, err.message);
      throw err;
    }
    // After the status that holds them was written (or held, to be written with the next pass): each verdict's Event once.
    writes += await recordEvents(this.client, svc, decision.events, now, RAYSERVICE_EVENTS, (err) => this.log.warn({ rayservice: key, err: (err as Error).message }, 'recording an Event failed'));
    writes += await this.applyServeConfigInPlace(svc, spec, decision, observation);
    writes += await syncHeadServeLabels(this.client, this.reader, namespace, observation.clusters, spec.excludeHeadPodFromServeSvc === true);
    writes += await this.clearSpentSteering(svc, decision);
    if (decision.actions.length > 0) {
      this.log.info({ rayservice: `${namespace}/${name}`, actions: decision.actions, phase: decision.status.phase, reason: decision.status.reason }, 'step');
    }
    const intervalMs = options.intervalSeconds * 1000;
    const requeueAt = nextAttentionAt(decision, { now, intervalMs, held: deferred, watchDriven: this.watchDriven, pollMs: this.pollMs });
    const dueAt = trafficStepDueAt(previous, decision.actions, intervalMs);
    return { requeueAt, status: decision.status, actions: decision.actions, writes, ...(decision.events.length > 0 ? { events: decision.events } : {}), ...(dueAt !== undefined ? { trafficStepDueAt: dueAt } : {}) };
  }

  /** Carries out one action; returns the number of API writes it made. */
  private async execute(svc: KubeObject, spec: RayServiceSpec, action: Exclude<RayServiceAction, MeasureAnalysisAction>, decision: RayServiceDecision, clusters: Map<string, KubeObject>): Promise<number> {
    const namespace = String(svc.metadata.namespace);
    switch (action.type) {
      case 'createPendingCluster': {
        const cluster = await this.createIfAbsent(buildRayCluster(svc, this.store.ownerReference(svc), spec, action.name, action.specHash, action.startFromMinReplicas), RAYCLUSTER);
        if (decision.status.upgradeStrategy === 'NewClusterWithIncrementalUpgrade' || spec.upgradeStrategy?.type === 'NewClusterWithIncrementalUpgrade') {
          await this.createIfAbsent(buildPerClusterServeService(cluster, spec), SERVICE);
          return 2;
        }
        return 1;
      }
      case 'setTargetCapacity': {
        const cluster = clusters.get(action.clusterName);
        return this.putServeConfig(svc, action.clusterName, cluster, serveConfigForCapacity(action, decision.status, appliedServeConfig(cluster), spec.serveConfigV2 ?? ''), action.percent);
      }
      case 'setTrafficWeights':
        return this.writeWeights(svc, spec, action.activeCluster, action.active, action.pendingCluster, action.pending);
      case 'promote':
        for (const s of buildStableServices(svc, this.store.ownerReference(svc), spec, action.cluster)) this.reader.wrote(await this.client.apply(s, { force: true }));
        return 2;
      case 'deleteCluster':
        await this.client.delete(RAYCLUSTER, action.name, namespace, { propagationPolicy: 'Background', ignoreNotFound: true });
        this.reader.deleted(RAYCLUSTER, action.name, namespace);
        await this.client.delete(SERVICE, perClusterServeService(action.name), namespace, { ignoreNotFound: true });
        this.reader.deleted(SERVICE, perClusterServeService(action.name), namespace);
        return 2;
    }
  }

  /** PUTs `config` at `percent` to a cluster's Serve and records it on the RayCluster; returns the API writes made. */
  private async putServeConfig(svc: KubeObject, clusterName: string, cluster: KubeObject | undefined, config: string, percent: number): Promise<number> {
    // A RayService without serveConfigV2 (KubeRay accepts one) has nothing to deploy: no PUT, as
    // KubeRay sends none; its clusters never report running applications, so it never turns Ready.
    if (config === '') return 0;
    const namespace = String(svc.metadata.namespace);
    await this.serve.putServeConfig({ namespace, name: clusterName }, config, percent === 100 ? null : percent, { timeoutMs: SERVE_PUT_TIMEOUT_MS });
    if (!cluster || appliedServeConfig(cluster) === config) return 0;
    this.reader.wrote(await this.client.patchMerge(RAYCLUSTER, clusterName, namespace, { metadata: { annotations: { [SERVE_CONFIG_ANNOTATION]: config } } }));
    return 1;
  }

  /** Applies a Serve config change in place when `inPlaceServeConfig` says so; returns the API writes made. */
  private async applyServeConfigInPlace(svc: KubeObject, spec: RayServiceSpec, decision: RayServiceDecision, observation: { owned: KubeObject[]; clusters: readonly ObservedCluster[]; goalSpecHash: string }): Promise<number> {
    const active = decision.status.activeClusterName;
    const cluster = observation.owned.find((c) => c.metadata.name === active);
    const observed = observation.clusters.find((c) => c.name === active);
    const serving = observed && { headReady: observed.headReady, targetCapacity: observed.targetCapacity, appliedConfig: appliedServeConfig(cluster) };
    const put = inPlaceServeConfig(decision, observation.goalSpecHash, serving, spec.serveConfigV2 ?? '');
    if (!put) return 0;
    this.log.info({ rayservice: `${svc.metadata.namespace}/${svc.metadata.name}`, cluster: put.cluster }, 'Serve config changed: applying in place');
    return this.putServeConfig(svc, put.cluster, cluster, put.config, put.percent);
  }

  /** Makes a route rayshift cannot take over visible in status (Ready=False, RouteNotAdoptable) instead of only in logs. */
  private async reportRouteProblem(svc: KubeObject, body: Record<string, unknown>, message: string): Promise<void> {
    const conditions = mergeConditions(asArray(body.conditions) as Condition[], [
      { type: 'Ready', status: 'False', reason: 'RouteNotAdoptable', message, observedGeneration: svc.metadata.generation },
    ], new Date(this.now()));
    await this.writeStatus(svc, { ...body, reason: 'RouteNotAdoptable', message, conditions });
  }

  private async createIfAbsent(obj: KubeObject, type: typeof RAYCLUSTER | typeof SERVICE): Promise<KubeObject> {
    try {
      const created = await this.client.create(obj);
      this.reader.wrote(created);
      return created;
    } catch (err) {
      if (isStatus(err, 409)) return this.client.get(type, String(obj.metadata.name), String(obj.metadata.namespace));
      throw err;
    }
  }

  private async writeWeights(svc: KubeObject, spec: RayServiceSpec, active: string, activeWeight: number, pending: string | undefined, pendingWeight: number): Promise<number> {
    const namespace = String(svc.metadata.namespace);
    const name = String(svc.metadata.name);
    let writes = 0;
    const gatewayRef = spec.rayshift?.gatewayRef;
    if (!gatewayRef) {
      const gw = gatewayOf(svc, spec);
      if (!(await this.reader.tryGet(GATEWAY, gw.name, gw.namespace))) {
        await this.createIfAbsentAny(buildGateway(svc, this.store.ownerReference(svc), spec.upgradeStrategy?.clusterUpgradeOptions?.gatewayClassName ?? ''));
        writes++;
      }
    }
    // `createPendingCluster` is not emitted again once the RayCluster exists, so a crash between
    // creating it and its `<cluster>-serve-svc` would leave the route pointing at no Service.
    for (const cluster of pending !== undefined ? [active, pending] : [active]) writes += await this.ensurePerClusterService(svc, spec, cluster);
    const backends = [{ cluster: active, weight: activeWeight }, ...(pending !== undefined ? [{ cluster: pending, weight: pendingWeight }] : [])];
    const routeType = routeTypeOf(spec);
    const routeName = serviceRouteName(name, spec.rayshift?.routeKind);
    const existing = await this.reader.tryGet(routeType, routeName, namespace);
    if (!existing) {
      const route = buildServiceRoute({
        rayServiceName: name,
        namespace,
        routeKind: spec.rayshift?.routeKind ?? 'HTTP',
        ...(gatewayRef ? { gatewayRef } : {}),
        backends,
        port: servePort(spec),
        ownerReferences: [this.store.ownerReference(svc)],
      });
      await this.createIfAbsentAny(route as KubeObject);
      return writes + 1;
    }
    // The first attempt plans against the route as read; a stale read fails the patch's `test`
    // ops and the writer re-reads from the API server.
    let reads = 0;
    const routeClient: RouteClient = {
      get: () => (reads++ === 0 ? Promise.resolve(existing) : this.client.get(routeType, routeName, namespace)),
      patch: (_path, ops) => this.client.patchJson(routeType, routeName, namespace, ops),
    };
    const result = await writeRouteWeights(
      routeClient,
      { kind: routeType.kind, namespace, name: routeName },
      clusterBackends(namespace, backends, servePort(spec)),
      { owns: ownsBackend(svc) },
    );
    if (result.ops.length > 0) this.reader.wrote(result.route as KubeObject);
    return writes + (result.ops.length > 0 ? 1 : 0);
  }

  /** Creates the route backend `<cluster>-serve-svc` when it is missing and its RayCluster exists; returns the writes made. */
  private async ensurePerClusterService(svc: KubeObject, spec: RayServiceSpec, clusterName: string): Promise<number> {
    const namespace = String(svc.metadata.namespace);
    if (await this.reader.tryGet(SERVICE, perClusterServeService(clusterName), namespace)) return 0;
    const cluster = await this.reader.tryGet(RAYCLUSTER, clusterName, namespace);
    if (!cluster || cluster.metadata.deletionTimestamp) return 0;
    await this.createIfAbsent(buildPerClusterServeService(cluster, spec), SERVICE);
    return 1;
  }

  private async createIfAbsentAny(obj: KubeObject): Promise<void> {
    try {
      this.reader.wrote(await this.client.create(obj));
    } catch (err) {
      if (!isStatus(err, 409)) throw err;
    }
  }

  /** Writes the status subresource when it differs from what is stored; true when it wrote. */
  private async writeStatus(svc: KubeObject, status: Record<string, unknown>): Promise<boolean> {
    const current = asObject(svc.status);
    if (sameStatus(current, status)) return false;
    return this.store.writeStatus(svc, { ...status, lastUpdateTime: new Date(this.now()).toISOString() });
  }

  /** Removes steering annotations once they took effect (abort: the rollback finished; promote: no upgrade left). */
  private async clearSpentSteering(svc: KubeObject, decision: RayServiceDecision): Promise<number> {
    const annotations = svc.metadata.annotations ?? {};
    const spent = spentSteeringAnnotations(annotations, decision.status);
    if (spent.length === 0) return 0;
    await this.store.patchMetadata(svc, spent.map((a) => ({ op: 'remove' as const, path: `/metadata/annotations/${a.replace(/~/g, '~0').replace(/\//g, '~1')}` })));
    return 1;
  }

  /** Deletion: carry out the engine's finalization actions, then release the finalizer. */
  private async finalize(svc: KubeObject): Promise<ReconcileResult> {
    if (!(svc.metadata.finalizers ?? []).includes(FINALIZER)) return { actions: [], writes: 0 };
    let writes = 0;
    const engine = asObject(asObject(svc.status).engineState) as Partial<RayServiceStatus>;
    const spec = svc.spec as unknown as RayServiceSpec;
    const actions = finalizationActions(engine);
    const route = actions.length === 0 ? undefined : await this.reader.tryGet(routeTypeOf(spec), serviceRouteName(String(svc.metadata.name), spec.rayshift?.routeKind), String(svc.metadata.namespace));
    // Without a route no request reaches either cluster: nothing to move.
    for (const a of route ? actions : []) writes += await this.writeWeights(svc, spec, a.activeCluster, a.active, a.pendingCluster, a.pending);
    const finalizers = (svc.metadata.finalizers ?? []).filter((f) => f !== FINALIZER);
    await this.store.patchMetadata(svc, [
      { op: 'test', path: '/metadata/resourceVersion', value: svc.metadata.resourceVersion },
      { op: 'replace', path: '/metadata/finalizers', value: finalizers },
    ]);
    this.log.info({ rayservice: `${svc.metadata.namespace}/${svc.metadata.name}` }, 'finalized: traffic on the active cluster');
    return { actions: [], writes: writes + 1 };
  }
}

/** `body` with the serving-spec record; every status write carries it, as server-side apply drops an omitted field. */
function withServingSpec(body: Record<string, unknown>, record: ServingSpec | undefined): Record<string, unknown> {
  return record ? { ...body, [SERVING_SPEC_FIELD]: record } : body;
}

/** The Serve config last PUT to a cluster, as recorded on it (undefined before the first PUT). */
function appliedServeConfig(cluster: KubeObject | undefined): string | undefined {
  return cluster?.metadata.annotations?.[SERVE_CONFIG_ANNOTATION];
}

/**
 * Status equality as JSON, ignoring key order (the API server returns keys sorted) and
 * `lastUpdateTime` (it changes on every write), so an unchanged status is never rewritten.
 */
function sameStatus(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  return canonicalJson({ ...a, lastUpdateTime: undefined }) === canonicalJson({ ...b, lastUpdateTime: undefined });
}
