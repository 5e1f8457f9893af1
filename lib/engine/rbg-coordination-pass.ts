/**
 * One executor pass over every coordination of a RoleBasedGroup (pure): each rule's step — held
 * where it stands while its warmup runs, else `coordinationStep`, gated by the group's analysis
 * when it has one (`analysedCoordinationStep`), or, when a person asked to roll the rule's rollout
 * back (`rollback` of `rbg-steering.ts`), the first of its rollback rounds — the rounds written, the
 * measurements to take and when to look again; for a rule with a `router`, the step sees its route as
 * read (`routeHoldOf`: the last old replicas wait for it), the pass decides the weights the route
 * should carry after that step (`routerStep`) and the scaling of its old release's router
 * (`routerScaleStep`); each step sees its roles' Unschedulable Pods when the executor read them
 * (`rbg-surge-scheduling.ts`), and the cluster's capacity when a rollout starts in the pass
 * (`releasesFirstRound`; the preflight is `rbg-capacity.ts`'s). The runtime's reconciler
 * observes the group, asks for this, and writes the result.
 */
import type { MeasureAnalysisAction } from './actions';
import { isUnread } from './capacity-preflight';
import { analysedCoordinationStep, type GroupAnalysisInput } from './rbg-analysis';
import { coordinationStep, ruleRevision, startRollback } from './rbg-coordination';
import { ROUND_EVENT, type CoordinationStep, type CoordinationStepInput, type ExecutorRule, type ObservedRole, type RbgCapacityReading, type RolloutEvent } from './rbg-coordination-types';
import type { CoordinationStatus } from './rbg-coordination-status';
import type { RbgRollbackRequest } from './rbg-steering';
import { routeHoldOf } from './rbg-router-hold';
import { routerStep, type ObservedRouterRoute, type SetRouterWeightsAction } from './rbg-router-step';
import { routerScaleStep, type ScaleRouterAction } from './rbg-router-scale';
import { heldByWarmup, heldForWarmup, type WarmupGateDecision } from './rbg-warmup';
import { ruleSurgeScheduling } from './rbg-surge-scheduling';

/** What a pass over a group sees. */
export interface CoordinationPassInput {
  readonly rules: readonly ExecutorRule[];
  /** Every role of the group, by name. */
  readonly roles: ReadonlyMap<string, ObservedRole>;
  /** The RBG controller has observed the group's current generation. */
  readonly controllerCaughtUp: boolean;
  /** The coordinations' statuses from the previous pass. */
  readonly previous: readonly CoordinationStatus[];
  /** The warmup gate's decision and the rules that wait for it (`warmupPendingRules`); absent when no rule waits. */
  readonly gate?: { readonly decision: WarmupGateDecision; readonly pending: readonly ExecutorRule[] };
  /** The group's analysis (its `analysis` option), with the measurements taken since the previous pass. */
  readonly analysis?: GroupAnalysisInput;
  /** A person's `rollback` (the group's `rayshift.dev/rollback` annotation), when one is set. */
  readonly rollback?: RbgRollbackRequest;
  /** Each routed rule's router route as read, by rule name (rules with a `router`). */
  readonly routes?: ReadonlyMap<string, ObservedRouterRoute>;
  /**
   * The coordinated roles' Pods by role, as listed (`ruleSurgeScheduling` counts the Unschedulable
   * ones), when the executor read the group's Pods (`needsRbgSurgeScheduling`). Undefined: not read.
   */
  readonly scheduling?: ReadonlyMap<string, readonly unknown[]>;
  /** The cluster's capacity and the group as read, when the executor listed it (`releasesFirstRound`); `unread` when it could not. Undefined: not listed. */
  readonly capacity?: RbgCapacityReading;
  /** Epoch ms. */
  readonly now: number;
}

/** What a pass over a group decides. */
export interface CoordinationPass {
  /** One step per rule, in the rules' order. */
  readonly steps: readonly CoordinationStep[];
  /** Rules whose step wrote a round (lowered a partition). */
  readonly rounds: number;
  /** The earliest time to look again even if nothing changes (a progress deadline, the warmup's timeout, a measurement due). */
  readonly wakeAt?: number;
  /** Analysis measurements to take for the next pass. */
  readonly measure: readonly MeasureAnalysisAction[];
  /** Router route weights to write before the steps' role writes (the way back's 0 lands before a replica returns). */
  readonly routerWrites: readonly SetRouterWeightsAction[];
  /** Router Deployments to scale back before the route weights (`routerScaleStep`). */
  readonly routerScalesBefore: readonly ScaleRouterAction[];
  /** Old releases' router Deployments to scale to 0 once the status recording their replicas has landed. */
  readonly routerScalesAfter: readonly ScaleRouterAction[];
}

/**
 * Whether `pass` releases a rollout's first round (a step that writes its round 1): the executor,
 * having decided the pass without the cluster's capacity, lists it only then and decides the pass
 * again with it (`capacity`), so the cluster is read once per rollout start and not on the passes
 * that wait before it (a controller catching up, a role with a replica down, a warmup).
 */
export function releasesFirstRound(pass: CoordinationPass): boolean {
  return pass.steps.some(releasesOwnFirstRound);
}

/** Whether `step` writes its rollout's round 1 (see `releasesFirstRound`). */
function releasesOwnFirstRound(step: CoordinationStep): boolean {
  return step.status.phase === 'Progressing' && step.status.rounds === 1 && step.events.some((e) => e.reason === ROUND_EVENT);
}

/** See the file comment. */
export function coordinationPass(input: CoordinationPassInput): CoordinationPass {
  const { rules, roles, gate } = input;
  const routerWrites: SetRouterWeightsAction[] = [];
  const routerScalesBefore: ScaleRouterAction[] = [];
  const routerScalesAfter: ScaleRouterAction[] = [];
  // The first rounds released so far in this pass, for the next rules' preflights (rbg-capacity.ts).
  const releasedInPass = new Map<string, number>();
  const steps = rules.map((rule) => {
    const step = ruleStep(input.capacity && !isUnread(input.capacity) ? { ...input, capacity: { ...input.capacity, releasedInPass } } : input, rule);
    if (releasesOwnFirstRound(step)) for (const w of step.writes) releasedInPass.set(w.name, w.partition);
    const observed = rule.router && input.routes?.get(rule.name);
    if (!observed) return step;
    const routed = routerStep(rule, roles, step.status, observed, step.lastRound);
    const prior = input.previous.find((c) => c.name === rule.name)?.router?.scaledDown;
    const scaled = routerScaleStep(rule.name, step.status, routed, observed.route, observed.deployments ?? new Map(), prior);
    if (scaled.routeAction) routerWrites.push(scaled.routeAction);
    routerScalesBefore.push(...scaled.before);
    routerScalesAfter.push(...scaled.after);
    return { ...step, status: { ...step.status, router: scaled.status } };
  });
  const wakes = [...steps.map((s) => s.wakeAt), gate?.decision.wakeAt].filter((t): t is number => t !== undefined);
  const rounds = steps.filter((s) => s.events.some((e) => e.reason === ROUND_EVENT)).length;
  return { steps, rounds, ...(wakes.length > 0 ? { wakeAt: Math.min(...wakes) } : {}), measure: steps.flatMap((s) => s.measure ?? []), routerWrites, routerScalesBefore, routerScalesAfter };
}

/** One rule's coordination step: held by its warmup, a requested rollback's first round, or the (analysed) step. */
function ruleStep(input: CoordinationPassInput, rule: ExecutorRule): CoordinationStep {
  const { roles, controllerCaughtUp, gate, now } = input;
  const prior = input.previous.find((c) => c.name === rule.name);
  if (gate && !gate.decision.open && gate.pending.includes(rule) && prior) return heldForWarmup(rule, roles, prior, gate.decision.status);
  // A status written while the warmup held the rule describes no round: the rollout starts afresh.
  const observed = rule.router && input.routes?.get(rule.name);
  const routeHold = observed ? routeHoldOf(rule, roles, observed) : undefined;
  // The prior status is of the roles' revision (ruleRevision hashes every role's template: once per step).
  const ofThisRevision = prior !== undefined && prior.revision === ruleRevision(rule, roles);
  // The rollout's start: the status's for this revision; a revision first seen now has created no Pod yet.
  const startedAt = ofThisRevision ? Date.parse(prior.startedAt) : now;
  const scheduling = input.scheduling && { scheduling: { unschedulable: ruleSurgeScheduling(input.scheduling, rule.roles.map((r) => r.name), startedAt, now) } };
  const capacity = input.capacity && { capacity: input.capacity };
  const step = { rule, roles, controllerCaughtUp, previous: prior && heldByWarmup(prior) ? undefined : prior, now, ...(routeHold ? { routeHold } : {}), ...scheduling, ...capacity };
  if (ofThisRevision && requested(input.rollback, prior)) return steeredRollback(step, prior, input.rollback!.cause);
  return input.analysis ? analysedCoordinationStep(step, input.analysis) : coordinationStep(step);
}

/** The rollout `prior` is one a person asked to roll back, and it is in flight or stopped (not yet rolling back, nor finished). */
function requested(request: RbgRollbackRequest | undefined, prior: CoordinationStatus): boolean {
  return request !== undefined && request.revisions.includes(prior.revision) && (prior.phase === 'Progressing' || prior.phase === 'Failed');
}

/** The first rollback round of a rollout a person rolls back: the same way back as a failed gate's, with its `RollbackStarted` Event. */
function steeredRollback(input: CoordinationStepInput, prior: CoordinationStatus, cause: string): CoordinationStep {
  const { deadlineAt: _none, blockingRole: _who, ...base } = prior;
  const back = startRollback(input, { ...base, reason: 'RollbackRequested', message: cause });
  const started: RolloutEvent = { type: 'Warning', reason: 'RollbackStarted', message: `${input.rule.name}: ${cause}; returning ${prior.roles.map((r) => r.name).join(', ')} to the revision before the rollout` };
  return { ...back, events: [started, ...back.events] };
}
