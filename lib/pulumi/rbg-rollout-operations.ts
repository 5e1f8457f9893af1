/**
 * The operations of `RoleBasedGroupRollout` (loaded by path inside its provider's methods): the
 * coordinated rolling update of a RoleBasedGroup with executor `pulumi`, run during `pulumi up`
 * by the same `RbgRolloutReconciler` the operator uses, until every coordination is complete for
 * the group's current generation, or fails, or the deadline passes. The group itself is a Pulumi
 * child applied by `@pulumi/kubernetes`; the reconciler writes only the coordinated roles'
 * partition, maxUnavailable and paused (the construct leaves them to the coordination) and its
 * status annotation, as with the operator under GitOps.
 */
import { isVerdictEvent } from '../engine/analysis-gate';
import { ROLLBACK_ROUND_EVENT } from '../engine/rbg-coordination-types';
import { driveUntilSettled } from '../runtime/drive';
import { KubeClient } from '../runtime/kube/client';
import { RBG_V1ALPHA1_TYPE, RBG_V1ALPHA2_TYPE } from '../spec/object-names';
import { RbgRolloutReconciler } from '../runtime/rbg/reconciler';
import { RolloutStatusDocument, describeCoordination, describeWarmup, readRolloutStatus } from '../runtime/rbg/status';
import { FollowedRolloutInputs, followedRolloutOperations } from './followed-rollout';
import { eventLine } from './step-line';

/** Inputs of `RoleBasedGroupRollout` as its provider receives them: the group (`apiVersion` `workloads.x-k8s.io/v1alpha2` or `…/v1alpha1`), the run settings, the connection, and: */
export interface RbgRolloutInputs extends FollowedRolloutInputs {
  /** Hash of the group's spec: a change makes Pulumi run `update`, which rolls it out. */
  readonly specHash: string;
}

/** Outputs: the inputs without the kubeconfig, and the rounds the last run wrote. */
export interface RbgRolloutOutputs extends Omit<RbgRolloutInputs, 'kubeconfig'> {
  /** Rounds (partition-lowering passes) the last run wrote. */
  readonly roundsLastRun: number;
}

/**
 * True when the RBG controller carried the group's spec at `generation` (`specCarried`, from the
 * reconciler's pass: RBG v0.6.0 writes a group's `status.observedGeneration` only when a role's
 * replica counts change, so the group's own status cannot tell), every coordination is complete
 * with every role updated and ready, and the pass wrote nothing (`passWrites`): the engine had no
 * action left. A routed rollout's old router is scaled to 0 only once the route as read sends it
 * nothing (rbg-router-scale.ts); the route hold normally has it so before the completing pass, which
 * then scales it, but a run that ended on a pass that still wrote would leave whatever the next pass
 * decides to the next `pulumi up`.
 */
export function rolloutComplete(generation: number, doc: RolloutStatusDocument | undefined, specCarried: boolean, passWrites: number): boolean {
  return (
    specCarried &&
    passWrites === 0 &&
    doc !== undefined &&
    doc.invalid === undefined &&
    doc.observedGeneration >= generation &&
    doc.coordinations.every((c) => c.phase === 'Complete' && c.roles.every((r) => r.updated === r.desired && r.ready === r.desired))
  );
}

/**
 * The error of a run whose own deadline (the resource's `deadlineSeconds`, Pulumi's limit on one
 * `pulumi up`) passed before the group settled. It is not a coordination's progress deadline
 * (`progressDeadlineSeconds`), which the engine decides on (stop, or roll back with
 * `rollbackOnDeadline`) and which fails the run as `ProgressDeadlineExceeded`. A rollback the run
 * leaves half done is named as such: no executor runs between two `pulumi up`s, so the replicas
 * still on the abandoned revision stay there until the next one resumes the rollback.
 */
export function runDeadlineMessage(inputs: Pick<RbgRolloutInputs, 'namespace' | 'name' | 'deadlineSeconds'>, doc: RolloutStatusDocument | undefined): string {
  const coordinations = doc?.coordinations ?? [];
  const where = coordinations.map(describeCoordination).join('; ') || 'no status yet';
  const run = `RoleBasedGroup ${inputs.namespace}/${inputs.name}: the Pulumi run's deadline (deadlineSeconds ${inputs.deadlineSeconds}) passed`;
  if (!coordinations.some((c) => c.phase === 'RollingBack')) return `${run} before the rollout completed: ${where}`;
  return `${run} while a rollback was under way, which stops here with replicas still on the abandoned revision: ${where}; the next \`pulumi up\` resumes the rollback (give deadlineSeconds room for the rollback rounds)`;
}

async function follow(client: KubeClient, inputs: RbgRolloutInputs): Promise<RbgRolloutOutputs> {
  const type = inputs.apiVersion === RBG_V1ALPHA1_TYPE.apiVersion ? RBG_V1ALPHA1_TYPE : RBG_V1ALPHA2_TYPE;
  const reconciler = new RbgRolloutReconciler({ client, type, executor: 'pulumi' });
  let rounds = 0;
  let warmupLine: string | undefined;
  let doc: RolloutStatusDocument | undefined;
  return driveUntilSettled<RbgRolloutOutputs>(
    async () => {
      const result = await reconciler.reconcile(inputs.namespace, inputs.name);
      doc = result.status;
      // The warmup before the first round (RBG v0.8): print where it stands whenever that changes.
      const line = doc?.warmup ? describeWarmup(doc.warmup) : undefined;
      if (line !== undefined && line !== warmupLine) console.log(`${new Date().toISOString().slice(11, 19)} ${inputs.name} ${line}`);
      warmupLine = line;
      // Each analysis verdict, as a RayService migration prints it (the Event's message names the rule).
      for (const e of result.events) if (isVerdictEvent(e)) console.log(eventLine(inputs.name, e, Date.now()));
      if (result.rounds > 0 || result.events.some((e) => e.reason === ROLLBACK_ROUND_EVENT)) {
        rounds += result.rounds;
        for (const c of doc?.coordinations ?? []) console.log(`${new Date().toISOString().slice(11, 19)} ${inputs.name} ${describeCoordination(c)}`);
      }
      if (doc?.invalid !== undefined) throw new Error(`RoleBasedGroup ${inputs.namespace}/${inputs.name}: coordination rejected: ${doc.invalid}`);
      const failed = doc?.coordinations.find((c) => c.phase === 'Failed' || c.phase === 'RolledBack');
      if (failed) {
        const warmup = failed.reason.startsWith('Warmup') && doc?.warmup ? `; ${describeWarmup(doc.warmup)}` : '';
        throw new Error(`RoleBasedGroup ${inputs.namespace}/${inputs.name}: ${failed.reason}: ${describeCoordination(failed)}${warmup}`);
      }
      const group = await client.tryGet(type, inputs.name, inputs.namespace);
      if (!group) throw new Error(`RoleBasedGroup ${inputs.namespace}/${inputs.name} does not exist`);
      if (rolloutComplete(group.metadata.generation ?? 0, doc, result.specCarried === true, result.writes)) {
        const { kubeconfig: _secret, ...shape } = inputs;
        return { settled: true, result: { ...shape, roundsLastRun: rounds } };
      }
      // RBG's controller moves the workloads without telling: poll at least every pollMs.
      return { settled: false, wakeAt: Math.min(result.requeueAt ?? Infinity, Date.now() + inputs.pollMs) };
    },
    {
      deadlineAt: Date.now() + inputs.deadlineSeconds * 1000,
      pollMs: inputs.pollMs,
      onDeadline: async () => {
        // A pass whose status write met a conflict (RBG writes the group too) returns no status: say where the group's last written one stands.
        const last = doc ?? readRolloutStatus((await client.tryGet(type, inputs.name, inputs.namespace)) ?? {});
        throw new Error(runDeadlineMessage(inputs, last));
      },
    },
  );
}

const operations = followedRolloutOperations(follow, ['specHash']);

/** `create`: arms the new group's coordination (its first status) and waits until it is complete. */
export const create = operations.create;

/** `update`: rolls the changed group out round by round. */
export const update = operations.update;

/** `diff`: a change of the group's spec or of the settings re-runs `update` (the kubeconfig is not compared). */
export const diff = operations.diff;
