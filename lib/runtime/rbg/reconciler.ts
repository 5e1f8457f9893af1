/**
 * The RoleBasedGroup coordinated-rollout reconciler: the one place that turns a RoleBasedGroup
 * executed by rayshift (label `rayshift.dev/coordination-executor`) into coordination steps and
 * their decisions into API calls. The engine (`coordinationPass`, lib/engine/rbg-coordination-pass.ts)
 * decides; this file only reads, writes and reports. A pass reads the group (and the coordinated roles'
 * workloads), runs one step per rule, then writes every role's partition / maxUnavailable / paused
 * and the status annotation in ONE JSON patch guarded by the group's resourceVersion, so a pass
 * either lands whole on the state it was computed from or not at all (and is redone). Events are
 * recorded after the patch lands. A crash between any two calls is safe: the next pass re-derives
 * everything from the group, and a round never raises a partition written for the same revision.
 * With the group's analysis, the measurements the pass asks for are taken after the patch (the
 * same runtime function as a RayService's) and handed to the next pass, which runs at once. A
 * rollback round's replicas on the abandoned revision are replaced after the patch too
 * (`returnReplicas`), and so are the replicas a RoleInstanceSet will never update (`replaceStranded`,
 * lib/engine/rbg-stranded.ts); the workloads' watch brings the next pass. A rule with a `router` has its
 * router route's weights written before the patch (`router-route.ts`), so a rollback's 0 for the new
 * release lands before any replica returns; a lost race leaves weights that match what was observed.
 * A router that is to gain weight is scaled back before the route; an old release's router is
 * scaled to 0 after the patch recording its replicas (`rbg-router-scale.ts`). While a coordination
 * is Progressing the pass reads the group's Pods (the same one list the routers count) and hands the
 * coordinated roles' Pods to the engine (`rbg-surge-scheduling.ts`), which may roll the rollout
 * back under `capacityPolicy: fail`. A pass that releases a rollout's first round
 * (`releasesFirstRound`) lists the cluster's capacity (`listCapacity`, shared with the RayService)
 * and is decided again with it, for the engine's preflight of that round (`rbg-capacity.ts`).
 */
import { coordinationPass, releasesFirstRound } from '../../engine/rbg-coordination-pass';
import { rbgRollbackRequestOf } from '../../engine/rbg-steering';
import { ANALYSIS_OVERRIDE_ANNOTATION, analysisOverrideOf } from '../../engine/steering';
import type { ExecutorRule, ObservedRole, RbgCapacityReading, RoleWrite, RolloutEvent } from '../../engine/rbg-coordination-types';
import { readCoordination } from '../../engine/rbg-executor-rules';
import type { ObjectOwner } from '../../engine/shards';
import { WarmupGateDecision, WarmupObservation, plannedWarmup, warmupGate, warmupPendingRules } from '../../engine/rbg-warmup';
import { EXECUTOR_LABEL } from '../../spec/rbg';
import type { ResolvedRolloutWarmup } from '../../spec/rbg-warmup';
import { JsonObject, asArray, asObject } from '../../spec/read';
import { KubeClient } from '../kube/client';
import type { JsonPatchOp } from '../kube/request-options';
import { jsonPointer } from '../kube/json-pointer';
import { KubeApiError, UnknownKindError, isPatchConflict } from '../kube/errors';
import { KubeObject } from '../kube/types';
import { PendingMeasurements } from '../prometheus/measure';
import { recordEvents, type EventSource } from '../kube/events';
import { WorkloadStatus, controllerCaughtUp, observeRoles } from './observe';
import { EVENT_CONTROLLER, OPERATOR_EXECUTOR, RbgResourceType, STATUS_ANNOTATION, WARMUP_TYPE } from '../../spec/object-names';
import { RolloutStatusDocument, describeCoordination, readRolloutStatus } from './status';
import { observeWarmup, warmupObject } from './warmup';
import { returnReplicas } from './return-replicas';
import { replaceStranded, roleInstanceReplicas, setMayStrand } from './stranded-replicas';
import { carryPartitions } from './carry-partition';
import { handOver } from './hand-over';
import { workloadOf, workloadStatus } from './workloads';
import { readStatefulSetReplicas } from './statefulset-replicas';
import { observeRouterRoutes, scaleRouter, writeRouterWeights } from './router-route';
import { groupPodsOnce, podsByRole, type GroupPods } from './group-pods';
import { needsRbgSurgeScheduling } from '../../engine/rbg-surge-scheduling';
import { listCapacity } from '../capacity';

/** The Events of coordinated rollouts. */
const RBG_EVENTS: EventSource = { controller: EVENT_CONTROLLER, action: 'CoordinatedRollout' };

/** Structured logger (pino-compatible subset). */
export interface RbgReconcileLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

/** Dependencies and settings of an `RbgRolloutReconciler`. */
export interface RbgRolloutReconcilerOptions {
  /** Kubernetes access. */
  readonly client: KubeClient;
  /** The RoleBasedGroup API version served by the cluster's RBG release. */
  readonly type: RbgResourceType;
  /** Which executor's groups to roll (the `rayshift.dev/coordination-executor` label value). @default "operator" */
  readonly executor?: string;
  /** Read each coordinated role's workload status, used where the group's role status is stale. @default true */
  readonly readWorkloads?: boolean;
  /** The clock. @default Date.now */
  readonly now?: () => number;
  /** Logger. @default silent */
  readonly log?: RbgReconcileLogger;
  /** The replica working on a group, recorded in its status document (`owner`; an operator). @default none recorded */
  readonly ownerOf?: (namespace: string, name: string) => ObjectOwner | undefined;
}

/** What a pass did. */
export interface RbgReconcileResult {
  /** Run again at this time (epoch ms): now after a lost write race, else the earliest progress deadline. */
  readonly requeueAt?: number;
  /** The status written (or already there); undefined when the group is gone or not executed by rayshift. */
  readonly status?: RolloutStatusDocument;
  /** Rounds written by this pass (coordinations whose partitions were lowered). */
  readonly rounds: number;
  /** API writes made (the patch, Events). */
  readonly writes: number;
  /** Events recorded. */
  readonly events: readonly RolloutEvent[];
  /** Analysis measurements taken, for the next pass. */
  readonly measured?: number;
  /**
   * RBG's controller had carried the group's spec into the coordinated roles' workloads when the
   * pass read it (`controllerCaughtUp`, which also holds for RBG v0.6.0, whose group status lags),
   * and the pass wrote no role field: the workloads carry the spec as the pass leaves it.
   */
  readonly specCarried?: boolean;
}

const SILENT: RbgReconcileLogger = { info: () => undefined, warn: () => undefined, debug: () => undefined };
const NOTHING: RbgReconcileResult = { rounds: 0, writes: 0, events: [] };

/** See the file comment. */
export class RbgRolloutReconciler {
  private readonly client: KubeClient;
  private readonly type: RbgResourceType;
  private readonly executor: string;
  private readonly readWorkloads: boolean;
  private readonly now: () => number;
  private readonly log: RbgReconcileLogger;
  private readonly ownerOf: (namespace: string, name: string) => ObjectOwner | undefined;
  /** Workload kinds the API server does not serve (their CRD is not installed), skipped from then on. */
  private readonly unserved = new Set<string>();
  /** Whether the cluster's RBG release refuses a partition ≥ replicas (see `webhookCapsPartition`); asked once. */
  private capsPartition?: Promise<boolean>;
  /** Analysis measurements taken and not yet handed to the engine, per group. */
  private readonly measured: PendingMeasurements;

  constructor(options: RbgRolloutReconcilerOptions) {
    this.client = options.client;
    this.type = options.type;
    this.executor = options.executor ?? OPERATOR_EXECUTOR;
    this.readWorkloads = options.readWorkloads ?? true;
    this.now = options.now ?? Date.now;
    this.log = options.log ?? SILENT;
    this.ownerOf = options.ownerOf ?? (() => undefined);
    this.measured = new PendingMeasurements(this.now, (key, action, error) => this.log.warn({ rbg: key, metric: action.metric, run: action.runId, error }, 'analysis query failed'));
  }

  /**
   * Whether the cluster runs RBG v0.8, whose validating webhook admits no partition ≥ replicas. No
   * object names the release; v0.8 is the first to serve RoleBasedGroupWarmup, which discovery
   * tells without any permission. Asked once per reconciler (a failed lookup is asked again).
   */
  private webhookCapsPartition(): Promise<boolean> {
    // Kind alone: a type with its plural resolves without asking the server, which would say yes on every release.
    this.capsPartition ??= this.client.resolve({ apiVersion: WARMUP_TYPE.apiVersion, kind: WARMUP_TYPE.kind }).then(
      () => true,
      (err: unknown) => {
        if (err instanceof UnknownKindError) return false;
        this.capsPartition = undefined;
        throw err;
      },
    );
    return this.capsPartition;
  }

  /** One pass over the RoleBasedGroup `namespace/name`. */
  async reconcile(namespace: string, name: string): Promise<RbgReconcileResult> {
    const group = await this.client.tryGet(this.type, name, namespace);
    if (!group || group.metadata.deletionTimestamp) return NOTHING;
    if (group.metadata.labels?.[EXECUTOR_LABEL] !== this.executor) return { ...NOTHING, writes: await handOver(this.client, this.type, group, this.log) };
    const key = `${namespace}/${name}`;
    const now = this.now();
    const generation = group.metadata.generation ?? 0;
    const previous = readRolloutStatus(group);
    const reading = readCoordination(group as unknown as JsonObject);
    if (reading.problem !== undefined) {
      const doc: RolloutStatusDocument = { observedGeneration: generation, invalid: reading.problem, coordinations: previous?.coordinations ?? [] };
      const events: RolloutEvent[] = previous?.invalid === reading.problem ? [] : [{ type: 'Warning', reason: 'InvalidCoordination', message: reading.problem }];
      this.log.warn({ rbg: key, problem: reading.problem }, 'coordination rejected');
      return this.write(group, doc, [], events, undefined, 0);
    }
    const workloads = this.readWorkloads ? await this.workloadStatuses(group, reading.rules, false) : new Map<string, WorkloadStatus>();
    const capsPartition = await this.webhookCapsPartition();
    const coordinatedRoles = reading.rules.flatMap((r) => r.roles.map((m) => m.name));
    /** The roles as `statuses` show them, and whether RBG's controller has caught up with the group. */
    const observe = (statuses: Map<string, WorkloadStatus>) => {
      const observed = observeRoles(group as unknown as JsonObject, statuses, capsPartition);
      return { roles: observed, caughtUp: controllerCaughtUp(group as unknown as JsonObject, observed, coordinatedRoles) };
    };
    let { roles, caughtUp } = observe(workloads);
    const gate = reading.warmup ? await this.warmupGate(group, reading.rules, reading.warmup, roles, previous, now) : undefined;
    const measurements = this.measured.takeAll(key);
    const override = analysisOverrideOf(group.metadata.annotations?.[ANALYSIS_OVERRIDE_ANNOTATION]);
    const analysis = reading.analysis && { analysis: reading.analysis, namespace, group: name, ...(override ? { override } : {}), ...(measurements ? { measurements } : {}) };
    const rollback = rbgRollbackRequestOf(group.metadata.annotations);
    // One list of the group's Pods per pass, for the routers and the scheduler watch alike.
    const pods = groupPodsOnce(this.client, group);
    const routes = await observeRouterRoutes(this.client, group, reading.rules, pods);
    const scheduling = needsRbgSurgeScheduling(previous?.coordinations) ? await this.coordinatedPods(group, pods, coordinatedRoles) : undefined;
    const gated = { previous: previous?.coordinations ?? [], ...(gate ? { gate } : {}) };
    let capacity: RbgCapacityReading | undefined;
    const passOf = () => coordinationPass({ rules: reading.rules, roles, controllerCaughtUp: caughtUp, ...gated, ...(analysis ? { analysis } : {}), ...(rollback ? { rollback } : {}), routes, ...(scheduling ? { scheduling } : {}), ...(capacity ? { capacity } : {}), now });
    let pass = passOf();
    // The cluster's capacity is read only for a pass that releases a rollout's first round, which is then decided again with it.
    if (releasesFirstRound(pass)) {
      capacity = await this.capacity(group);
      pass = passOf();
    }
    // The way back counts a StatefulSet role's Pods (statefulset-replicas.ts). They are read only when
    // a coordination rolls back (the pure pass is then decided again from them): on RBG v0.6.0 every
    // read before the pass's writes also delays carrying its partitions into the StatefulSets.
    const before = new Map((previous?.coordinations ?? []).map((c) => [c.name, c.phase]));
    const rollingBack = pass.steps.some((s) => s.status.phase === 'RollingBack' || (s.status.phase === 'RolledBack' && before.get(s.status.name) !== 'RolledBack'));
    const statefulSets = asArray(asObject(group.spec).roles).some((r) => workloads.has(String(asObject(r).name)) && workloadOf(group as unknown as JsonObject, asObject(r)).type.kind === 'StatefulSet');
    if (rollingBack && statefulSets) {
      ({ roles, caughtUp } = observe(await this.workloadStatuses(group, reading.rules, true)));
      pass = passOf();
    }
    // Route weights first: on the way back the new release's weight is 0 before its first replica is returned.
    let routeWrites = 0;
    const warnEvent = (err: unknown) => this.log.warn({ rbg: key, err: (err as Error).message }, 'recording an Event failed');
    // A router that is to gain weight is scaled back before the route (which holds until it is ready).
    for (const action of pass.routerScalesBefore) {
      routeWrites += await scaleRouter(this.client, group, action, this.now(), RBG_EVENTS, warnEvent);
      this.log.info({ rbg: key, deployment: action.deployment, replicas: action.replicas }, 'router scaled');
    }
    for (const action of pass.routerWrites) {
      routeWrites += await writeRouterWeights(this.client, group, action, routes.get(action.rule), this.now(), RBG_EVENTS, warnEvent);
      this.log.info({ rbg: key, route: action.route, backends: action.backends }, 'router weights');
    }
    const warmup = gate?.decision.status ?? previous?.warmup;
    const doc: RolloutStatusDocument = { observedGeneration: generation, coordinations: pass.steps.map((s) => s.status), ...(warmup ? { warmup } : {}) };
    for (const s of pass.steps) if (s.writes.length > 0) this.log.info({ rbg: key, writes: s.writes, status: describeCoordination(s.status) }, 'coordination step');
    const roleWrites = pass.steps.flatMap((s) => s.writes);
    const written = await this.write(group, doc, roleWrites, [...(gate?.decision.events ?? []), ...pass.steps.flatMap((s) => s.events)], pass.wakeAt, pass.rounds);
    const counted = { ...written, writes: written.writes + routeWrites };
    let result: RbgReconcileResult = written.status === undefined ? counted : { ...counted, specCarried: caughtUp && roleWrites.length === 0 };
    // An old router is scaled to 0 only once the status recording its replicas landed (a lost race redoes the pass).
    if (result.status !== undefined) {
      let scaled = 0;
      for (const action of pass.routerScalesAfter) {
        scaled += await scaleRouter(this.client, group, action, this.now(), RBG_EVENTS, warnEvent);
        this.log.info({ rbg: key, deployment: action.deployment, replicas: action.replicas }, 'router scaled');
      }
      result = { ...result, writes: result.writes + scaled };
    }
    // A rollback round's replicas are replaced only once the status asking for it landed (a lost race redoes the pass).
    const returns = result.status === undefined ? [] : pass.steps.flatMap((s) => s.returns ?? []);
    for (const ret of returns) {
      const { deleted, reverted } = await returnReplicas(this.client, group, ret);
      if (deleted + reverted > 0) this.log.info({ rbg: key, role: ret.name, below: ret.below, revertBelow: ret.revertBelow, deleted, reverted }, 'returned replicas on the abandoned revision');
    }
    // Replicas a workload will never update are replaced once the status naming them landed.
    const replaces = result.status === undefined ? [] : pass.steps.flatMap((s) => s.replaces ?? []);
    for (const rep of replaces) {
      const deleted = await replaceStranded(this.client, group, rep);
      if (deleted > 0) this.log.info({ rbg: key, role: rep.name, ordinals: rep.ordinals, revision: rep.revision, deleted }, 'replaced replicas their workload will not update');
    }
    // RBG v0.6.0 resets a StatefulSet's partition on every round: carry the round's into it (once the round landed).
    if (result.status !== undefined) {
      const coordinated = new Set(reading.rules.flatMap((r) => r.roles.map((m) => m.name)));
      const carried = await carryPartitions(this.client, group, new Map([...roles].filter(([n]) => coordinated.has(n))), roleWrites);
      if (carried > 0) this.log.info({ rbg: key, carried }, 'carried role partitions into their StatefulSets');
    }
    // Measured only once the status asking for them landed (a lost race redoes the pass, which asks again).
    if (pass.measure.length === 0 || result.status === undefined) return result;
    await this.measured.measure(key, pass.measure);
    return { ...result, requeueAt: this.now(), measured: pass.measure.length };
  }


  /**
   * The warmup gate of a pass: the rules that wait for the warmup of the current images (the
   * engine's `warmupPendingRules`) and the gate's decision over the warmup read here, created here
   * when missing. Undefined when no rule waits.
   */
  private async warmupGate(
    group: KubeObject,
    rules: readonly ExecutorRule[],
    warmup: ResolvedRolloutWarmup,
    roles: ReadonlyMap<string, ObservedRole>,
    previous: RolloutStatusDocument | undefined,
    now: number,
  ): Promise<{ decision: WarmupGateDecision; pending: readonly ExecutorRule[] } | undefined> {
    const pending = warmupPendingRules(rules, warmup, roles, previous?.coordinations ?? []);
    if (pending.length === 0) return undefined;
    const planned = plannedWarmup(group as unknown as JsonObject, warmup);
    const namespace = String(group.metadata.namespace);
    let observed: WarmupObservation | undefined;
    try {
      const obj = await this.client.tryGet(WARMUP_TYPE, planned.name, namespace);
      observed = obj ? observeWarmup(obj) : undefined;
    } catch (err) {
      if (!(err instanceof UnknownKindError)) throw err;
      // Without RBG v0.8 nothing can warm the nodes: the warmup fails, and onFailure decides.
      observed = { phase: 'Failed', desired: 0, succeeded: 0, failed: 0, active: 0, message: 'the API server serves no RoleBasedGroupWarmup: RBG v0.8 is not installed' };
    }
    const decision = warmupGate({ name: planned.name, revision: planned.revision, previous: previous?.warmup, observed, onFailure: warmup.onFailure, timeoutSeconds: warmup.globalTimeoutSeconds, now });
    if (decision.create) {
      try {
        await this.client.create(warmupObject(group, planned));
        this.log.info({ rbg: `${namespace}/${group.metadata.name}`, warmup: planned.name }, 'warmup created');
      } catch (err) {
        if (!(err instanceof KubeApiError && err.isAlreadyExists)) throw err;
      }
    }
    return { decision, pending };
  }

  /**
   * The coordinated roles' Pods by role, for the scheduler watch; undefined (nothing judged, the
   * rollout goes on as without the watch) when the Pods cannot be listed, e.g. a Pulumi stack's
   * kubeconfig without `list` on pods.
   */
  private async coordinatedPods(group: KubeObject, pods: GroupPods, roles: readonly string[]): Promise<Map<string, KubeObject[]> | undefined> {
    try {
      return podsByRole(group, await pods(), new Set(roles));
    } catch (err) {
      this.log.warn({ rbg: `${group.metadata.namespace}/${group.metadata.name}`, err: (err as Error).message }, 'scheduler watch skipped: the group\'s Pods could not be listed');
      return undefined;
    }
  }

  /**
   * The cluster's capacity for the preflight of a rollout's first round, with the group as read;
   * `unread` (the rule's policy decides) when it cannot be listed, e.g. a Pulumi stack's kubeconfig
   * without `list` on nodes.
   */
  private async capacity(group: KubeObject): Promise<RbgCapacityReading> {
    try {
      return { group, listed: await listCapacity(this.client, String(group.metadata.namespace)) };
    } catch (err) {
      this.log.warn({ rbg: `${group.metadata.namespace}/${group.metadata.name}`, err: (err as Error).message }, 'capacity preflight: the cluster could not be read');
      return { unread: (err as Error).message };
    }
  }

  /** Writes role fields and the status annotation in one guarded patch, then the Events. */
  private async write(group: KubeObject, doc: RolloutStatusDocument, writes: readonly RoleWrite[], events: readonly RolloutEvent[], wakeAt: number | undefined, rounds: number): Promise<RbgReconcileResult> {
    const namespace = String(group.metadata.namespace);
    const name = String(group.metadata.name);
    const ops: JsonPatchOp[] = writes.flatMap((w) => roleWriteOps(group, w));
    // Role writes change the spec, so the patch raises the generation by one: the document
    // describes the group as it will be after this patch, which is what readers compare against.
    if (ops.length > 0) doc = { ...doc, observedGeneration: doc.observedGeneration + 1 };
    // A replica taking over the group's shard names itself in the next patch it writes.
    const owner = this.ownerOf(namespace, name);
    if (owner) doc = { ...doc, owner };
    const text = JSON.stringify(doc);
    if (group.metadata.annotations?.[STATUS_ANNOTATION] !== text) {
      ops.push(group.metadata.annotations ? { op: 'add', path: jsonPointer('metadata', 'annotations', STATUS_ANNOTATION), value: text } : { op: 'add', path: '/metadata/annotations', value: { [STATUS_ANNOTATION]: text } });
    }
    let written = 0;
    if (ops.length > 0) {
      try {
        await this.client.patchJson(this.type, name, namespace, [{ op: 'test', path: '/metadata/resourceVersion', value: group.metadata.resourceVersion }, ...ops]);
        written++;
      } catch (err) {
        // The group changed since it was read (a failed `test` op, a racing update): redo from the newer state.
        // Anything else (a schema or admission refusal) is an error the work queue retries with backoff.
        if (isPatchConflict(err)) return { requeueAt: this.now(), rounds: 0, writes: 0, events: [] };
        throw err;
      }
    }
    written += await recordEvents(this.client, group, events, this.now(), RBG_EVENTS, (err) => this.log.warn({ rbg: `${namespace}/${name}`, err: (err as Error).message }, 'recording an Event failed'));
    return { requeueAt: wakeAt, status: doc, rounds, writes: written, events };
  }

  /** The status of each coordinated role's workload that the API server serves; with `pods`, a StatefulSet's replicas per ordinal too. */
  private async workloadStatuses(group: KubeObject, rules: readonly ExecutorRule[], pods: boolean): Promise<Map<string, WorkloadStatus>> {
    const coordinated = new Set(rules.flatMap((r) => r.roles.map((x) => x.name)));
    const out = new Map<string, WorkloadStatus>();
    for (const role of asArray(asObject(group.spec).roles).map(asObject)) {
      if (!coordinated.has(String(role.name))) continue;
      const ref = workloadOf(group as unknown as JsonObject, role);
      const kindKey = `${ref.type.apiVersion}/${ref.type.kind}`;
      if (this.unserved.has(kindKey)) continue;
      try {
        const namespace = String(group.metadata.namespace);
        // A StatefulSet reports no updated-and-ready replicas: the way back counts its Pods, read right after it.
        if (pods && ref.type.kind === 'StatefulSet') {
          const read = await readStatefulSetReplicas(this.client, ref.type, ref.name, namespace);
          if (read) out.set(String(role.name), { ...workloadStatus(read.statefulSet as unknown as JsonObject), ...(read.replicas ? { replicas: read.replicas } : {}) });
          continue;
        }
        const w = await this.client.tryGet(ref.type, ref.name, namespace);
        // A RoleInstanceSet that will update none of its replicas left on another revision: they are listed for the engine to replace.
        if (w) out.set(String(role.name), { ...workloadStatus(w as unknown as JsonObject), ...(ref.type.kind === 'RoleInstanceSet' && setMayStrand(w) ? { replicas: await roleInstanceReplicas(this.client, w) } : {}) });
      } catch (err) {
        if (!(err instanceof UnknownKindError)) throw err;
        this.unserved.add(kindKey);
      }
    }
    return out;
  }
}


/** JSON-patch ops that set one role's partition, maxUnavailable and paused, creating the rollout strategy when absent. */
export function roleWriteOps(group: KubeObject, w: RoleWrite): JsonPatchOp[] {
  const role = asObject(asArray(asObject(group.spec).roles)[w.index]);
  const at = `/spec/roles/${w.index}`;
  const fields = { partition: w.partition, maxUnavailable: w.maxUnavailable, paused: w.paused };
  const guard: JsonPatchOp = { op: 'test', path: `${at}/name`, value: w.name };
  if (role.rolloutStrategy === undefined) return [guard, { op: 'add', path: `${at}/rolloutStrategy`, value: { type: 'RollingUpdate', rollingUpdate: fields } }];
  if (asObject(role.rolloutStrategy).rollingUpdate === undefined) return [guard, { op: 'add', path: `${at}/rolloutStrategy/rollingUpdate`, value: fields }];
  return [guard, ...Object.entries(fields).map(([k, v]): JsonPatchOp => ({ op: 'add', path: `${at}/rolloutStrategy/rollingUpdate/${k}`, value: v }))];
}
