/**
 * The RayService reconciler, for `rayshift.dev/v1alpha1` RayServices: one pass is observe
 * (`RayServiceObserver`, observe.ts) → decide (`nextRayService`, then `planPass` and
 * `persistChoice`, lib/engine/rayservice-pass.ts) → persist (the status subresource, the intent,
 * before any action) → execute (`RayServiceExecutor`, execute.ts: a switch over the plan's steps).
 * Nothing here decides. A crash between any two calls is safe: every step is idempotent and the
 * engine re-derives what is left from what it observes next time.
 */
import { resolveUpgradeOptions, type UpgradeStrategyType } from '../../spec/rayservice';
import { RayServiceAction } from '../../engine/actions';
import { nextRayService, RayServiceDecision } from '../../engine/rayservice-engine';
import { PassSpec, finalizationSteps, persistChoice, planPass } from '../../engine/rayservice-pass';
import { routeManagedFor } from '../../engine/route-convergence';
import { RayServiceStatus } from '../../engine/status';
import type { ObjectOwner } from '../../engine/shards';
import { canonicalJson } from '../../spec/canonical-json';
import { finalizationActions, nextAttentionAt, trafficStepDueAt } from '../../engine/pass-rules';
import { RayServiceSpec, validateRayService } from '../../spec/rayservice';
import type { ValidationResult } from '../../spec/problem';
import { asArray, asObject } from '../../spec/read';
import { formatProblem } from '../../spec/problem';
import { Condition, mergeConditions } from '../kube/conditions';
import { KubeObject } from '../kube/types';
import { ObjectReader, apiReader } from '../kube/object-reader';
import { RayServiceStore, rayshiftServiceStore } from './store';
import { RayServiceObserver, routeTypeOf } from './observe';
import { RoutePlanError } from '../route/weight-patch';
import { RayServiceKube, RayServiceServe } from './ports';
import { PendingMeasurements } from '../prometheus/measure';
import { FINALIZER, serviceRouteName } from '../../spec/object-names';
import { lastUpdateTimeOf, renderInvalidStatus, renderStatus, sameStatus, sameStatusButServeReplicas, serveReplicasDiffer } from './status';
import { SERVING_SPEC_FIELD, ServingSpec, nextServingSpec, servingSpecIn } from './serving-spec';
import { RayServiceExecutor } from './execute';

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
  /** The replica working on a service, recorded in every status write (`status.owner`; an operator). @default none recorded */
  readonly ownerOf?: (namespace: string, name: string) => ObjectOwner | undefined;
}

const SILENT: ReconcileLogger = { info: () => undefined, warn: () => undefined, debug: () => undefined };

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
  private readonly ownerOf: (namespace: string, name: string) => ObjectOwner | undefined;
  private readonly unwritten = new Map<string, UnwrittenStatus>();
  /** The engine status this process last wrote (or found stored and unchanged), per service. */
  private readonly written = new Map<string, string>();
  private readonly observer: RayServiceObserver;
  /** Analysis measurements taken and not yet handed to the engine, per service. */
  private readonly measured: PendingMeasurements;
  private readonly executor: RayServiceExecutor;
  /**
   * The last validation per service and the input it judged: validating parses the Serve config
   * (about 1 ms, most of a pass's CPU), and most passes see the spec of the pass before.
   */
  private readonly validated = new Map<string, { readonly input: string; readonly result: ValidationResult }>();

  constructor(options: RayServiceReconcilerOptions) {
    this.client = options.client;
    this.serve = options.serve;
    this.now = options.now ?? Date.now;
    this.pollMs = options.capacityPollMs ?? 1000;
    this.log = options.log ?? SILENT;
    this.reader = options.reader ?? apiReader(options.client);
    this.store = options.store ?? rayshiftServiceStore(options.client, this.reader);
    this.watchDriven = options.watchDriven ?? false;
    this.ownerOf = options.ownerOf ?? (() => undefined);
    this.measured = new PendingMeasurements(this.now, (key, action, error) => this.log.warn({ rayservice: key, metric: action.metric, run: action.runId, error }, 'analysis query failed'));
    this.observer = new RayServiceObserver({ client: this.client, serve: this.serve, reader: this.reader, store: this.store, log: this.log, now: this.now });
    this.executor = new RayServiceExecutor({ client: this.client, serve: this.serve, reader: this.reader, store: this.store, measured: this.measured, now: this.now, warn: (obj, msg) => this.log.warn(obj, msg) });
  }

  /** One pass over the RayService `namespace/name`: observe, decide, persist, execute. */
  async reconcile(namespace: string, name: string): Promise<ReconcileResult> {
    const key = `${namespace}/${name}`;
    const svc = await this.store.get(namespace, name);
    if (!svc) {
      this.unwritten.delete(key);
      this.written.delete(key);
      this.measured.takeAll(key);
      this.validated.delete(key);
      return { actions: [], writes: 0 };
    }
    if (svc.metadata.deletionTimestamp) return this.finalize(svc);
    let writes = await this.addFinalizer(svc);
    const generation = svc.metadata.generation ?? 0;
    const status = asObject(svc.status);
    const conditions = asArray(status.conditions) as Condition[];
    const validation = this.validate(key, svc);
    if (validation.errors.length > 0) {
      const message = validation.errors.map(formatProblem).join('; ');
      const body = withServingSpec(renderInvalidStatus(message, generation, conditions, status.engineState, new Date(this.now())), servingSpecIn(status));
      if (await this.writeStatus(svc, body)) writes++;
      this.log.warn({ rayservice: key, message }, 'spec rejected');
      return { actions: [], writes };
    }
    // Observe.
    const spec = svc.spec as unknown as RayServiceSpec;
    const options = resolveUpgradeOptions(spec);
    const storedState = asObject(status.engineState) as Partial<RayServiceStatus>;
    const { routeObject, ...observation } = await this.observer.observe(svc, spec, routeManagedFor(options.strategy, storedState.upgradeStrategy), options);
    const stored = observation.status;
    const basis = canonicalJson(stored ?? null);
    const held = this.unwritten.get(key);
    const now = this.now();
    const previous = held?.basis === basis ? held.status : stored;
    const measurements = this.measured.takeAll(key);
    // Decide.
    const decision = nextRayService({ ...observation, status: previous, ...(measurements ? { measurements } : {}) }, options, now);
    const steps = planPass(decision, observation, passSpecOf(spec, options.strategy));
    const servingSpec = nextServingSpec(status, spec, decision.status, observation.goalSpecHash, observation.clusters);
    const body = withServingSpec(renderStatus(decision.status, generation, conditions, new Date(now), observation.clusters), servingSpec);
    const next = this.withOwner(svc, body);
    const unchanged = sameStatus(status, next);
    const persist = persistChoice(decision, {
      stored,
      storedIsOwn: this.written.get(key) === basis,
      replicasDiffer: serveReplicasDiffer(status, next),
      now,
      lastWriteAt: lastUpdateTimeOf(status),
      onlyReplicasDiffer: !unchanged && sameStatusButServeReplicas(status, next),
    });
    // Persist.
    if (persist.status === 'hold') {
      this.unwritten.set(key, { basis, status: decision.status });
    } else {
      this.unwritten.delete(key);
      if (!unchanged && (await this.store.writeStatus(svc, stamped(next, now)))) writes++;
      this.written.set(key, canonicalJson(decision.status));
    }
    // Execute.
    const target = { svc, spec, decision, ...(routeObject ? { route: routeObject } : {}) };
    try {
      for (const step of steps) writes += await this.executor.run(target, step);
    } catch (err) {
      if (err instanceof RoutePlanError) await this.reportRouteProblem(svc, body, err.message);
      throw err;
    }
    if (decision.actions.length > 0) this.log.info({ rayservice: key, actions: decision.actions, phase: decision.status.phase, reason: decision.status.reason }, 'step');
    const intervalMs = options.intervalSeconds * 1000;
    const requeueAt = nextAttentionAt(decision, { now, intervalMs, held: persist.confirmationHeld, watchDriven: this.watchDriven, pollMs: this.pollMs, ...(persist.until !== undefined ? { replicasDueAt: persist.until } : {}) });
    const dueAt = trafficStepDueAt(previous, decision.actions, intervalMs);
    return { requeueAt, status: decision.status, actions: decision.actions, writes, ...(decision.events.length > 0 ? { events: decision.events } : {}), ...(dueAt !== undefined ? { trafficStepDueAt: dueAt } : {}) };
  }

  /** `validateRayService(svc)`, computed again only when what it reads (apiVersion, name, annotations, spec) changed. */
  private validate(key: string, svc: KubeObject): ValidationResult {
    const input = JSON.stringify([svc.apiVersion, svc.metadata.name, svc.metadata.annotations ?? null, svc.spec ?? null]);
    const last = this.validated.get(key);
    if (last?.input === input) return last.result;
    const result = validateRayService(svc);
    this.validated.set(key, { input, result });
    return result;
  }

  /** Adds rayshift's finalizer when the store uses one and it is missing; returns the writes made. */
  private async addFinalizer(svc: KubeObject): Promise<number> {
    if (!this.store.usesFinalizer || (svc.metadata.finalizers ?? []).includes(FINALIZER)) return 0;
    await this.store.patchMetadata(svc, [
      { op: 'test', path: '/metadata/resourceVersion', value: svc.metadata.resourceVersion },
      { op: 'add', path: '/metadata/finalizers', value: [...(svc.metadata.finalizers ?? []), FINALIZER] },
    ]);
    return 1;
  }

  /** Makes a route rayshift cannot take over visible in status (Ready=False, RouteNotAdoptable) instead of only in logs. */
  private async reportRouteProblem(svc: KubeObject, body: Record<string, unknown>, message: string): Promise<void> {
    const conditions = mergeConditions(asArray(body.conditions) as Condition[], [
      { type: 'Ready', status: 'False', reason: 'RouteNotAdoptable', message, observedGeneration: svc.metadata.generation },
    ], new Date(this.now()));
    await this.writeStatus(svc, { ...body, reason: 'RouteNotAdoptable', message, conditions });
  }

  /** Writes the status subresource when it differs from what is stored; true when it wrote. */
  private async writeStatus(svc: KubeObject, body: Record<string, unknown>): Promise<boolean> {
    const status = this.withOwner(svc, body);
    if (sameStatus(asObject(svc.status), status)) return false;
    return this.store.writeStatus(svc, stamped(status, this.now()));
  }

  /**
   * `body` naming the replica that writes it: every write names it (server-side apply drops an
   * omitted field), so a replica taking over a shard rewrites the status once, at its first pass
   * that persists.
   */
  private withOwner(svc: KubeObject, body: Record<string, unknown>): Record<string, unknown> {
    const owner = this.ownerOf(String(svc.metadata.namespace), String(svc.metadata.name));
    return owner ? { ...body, owner } : body;
  }

  /** Deletion: carry out the engine's finalization actions, then release the finalizer. */
  private async finalize(svc: KubeObject): Promise<ReconcileResult> {
    if (!(svc.metadata.finalizers ?? []).includes(FINALIZER)) return { actions: [], writes: 0 };
    let writes = 0;
    const engine = asObject(asObject(svc.status).engineState) as Partial<RayServiceStatus>;
    const spec = svc.spec as unknown as RayServiceSpec;
    const actions = finalizationActions(engine);
    const route = actions.length === 0 ? undefined : await this.reader.tryGet(routeTypeOf(spec), serviceRouteName(String(svc.metadata.name), spec.rayshift?.routeKind), String(svc.metadata.namespace));
    const target = { svc, spec, decision: { status: engine as RayServiceStatus, actions, events: [] }, ...(route ? { route } : {}) };
    for (const step of finalizationSteps(actions, route !== undefined)) writes += await this.executor.run(target, step);
    const finalizers = (svc.metadata.finalizers ?? []).filter((f) => f !== FINALIZER);
    await this.store.patchMetadata(svc, [
      { op: 'test', path: '/metadata/resourceVersion', value: svc.metadata.resourceVersion },
      { op: 'replace', path: '/metadata/finalizers', value: finalizers },
    ]);
    this.log.info({ rayservice: `${svc.metadata.namespace}/${svc.metadata.name}` }, 'finalized: traffic on the active cluster');
    return { actions: [], writes: writes + 1 };
  }
}

/** What the pass plan reads of the spec. */
function passSpecOf(spec: RayServiceSpec, strategy: UpgradeStrategyType): PassSpec {
  return { strategy, userGateway: spec.rayshift?.gatewayRef !== undefined, serveConfig: spec.serveConfigV2 ?? '', excludeHeadPodFromServeSvc: spec.excludeHeadPodFromServeSvc === true };
}

/** `status` with the time of its write (`lastUpdateTime`, which `sameStatus` ignores and the replicas' refresh counts from). */
function stamped(status: Record<string, unknown>, now: number): Record<string, unknown> {
  return { ...status, lastUpdateTime: new Date(now).toISOString() };
}

/** `body` with the serving-spec record; every status write carries it, as server-side apply drops an omitted field. */
function withServingSpec(body: Record<string, unknown>, record: ServingSpec | undefined): Record<string, unknown> {
  return record ? { ...body, [SERVING_SPEC_FIELD]: record } : body;
}

