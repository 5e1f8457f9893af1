/**
 * The operations of `UpgradeProgress` (loaded by path inside its provider's methods): follow a
 * RayService that KubeRay or the rayshift operator upgrades, printing a line each time its
 * weights or capacities move, until no upgrade is in progress for the current generation or the
 * deadline passes. It only reads: the controller owns the migration.
 */
import { Condition, isConditionTrue } from '../runtime/kube/conditions';
import { driveUntilSettled } from '../runtime/drive';
import { KubeClient } from '../runtime/kube/client';
import { KubeObject } from '../runtime/kube/types';
import { statusSideOrUnset } from '../runtime/rayservice/progress';
import { asArray, asObject } from '../spec/read';
import { FollowedRolloutInputs, followedRolloutOperations } from './followed-rollout';

/** Inputs of `UpgradeProgress` as its provider receives them: the RayService (`apiVersion` `ray.io/v1` for KubeRay or `rayshift.dev/v1alpha1` for the operator), the run settings, the connection, and: */
export interface ProgressInputs extends FollowedRolloutInputs {
  /** Hash of the goal cluster spec: a change makes Pulumi run `update`, which follows the upgrade it starts. */
  readonly goalSpecHash: string;
}

/** Outputs of `UpgradeProgress`: the inputs without the kubeconfig, and where the service stands. */
export interface ProgressOutputs extends Omit<ProgressInputs, 'kubeconfig'> {
  /** The serving RayCluster. */
  readonly activeClusterName?: string;
  /** Changes of weights or capacities seen while following. */
  readonly movesSeen: number;
}

/** Both sides' weights and capacities and whether an upgrade is in progress, from a RayService's status. */
export interface UpgradeSnapshot {
  readonly observed: boolean;
  readonly ready: boolean;
  readonly upgrading: boolean;
  readonly active?: string;
  readonly pending?: string;
  readonly line: string;
}

/** Reads a RayService status (KubeRay's field names, which the operator writes too; each side by `statusSideOrUnset`). */
export function snapshotOf(svc: KubeObject): UpgradeSnapshot {
  const status = asObject(svc.status);
  const conditions = asArray(status.conditions) as Condition[];
  const a = statusSideOrUnset(status.activeServiceStatus, 'active');
  const p = statusSideOrUnset(status.pendingServiceStatus, 'pending');
  return {
    observed: Number(status.observedGeneration ?? 0) >= Number(svc.metadata.generation ?? 0),
    ready: isConditionTrue(conditions, 'Ready'),
    upgrading: isConditionTrue(conditions, 'UpgradeInProgress') || p.name !== undefined,
    active: a.name,
    pending: p.name,
    line: `weights ${a.name ?? '-'} ${a.weight} / ${p.name ?? '-'} ${p.weight}, capacity ${a.capacity}% / ${p.capacity}%`,
  };
}

/** Follows the service until its current generation is observed, Ready and not upgrading; throws at the deadline. */
async function follow(client: KubeClient, inputs: ProgressInputs): Promise<ProgressOutputs> {
  const type = { apiVersion: inputs.apiVersion, kind: 'RayService', plural: 'rayservices', namespaced: true };
  let last = '';
  let moves = 0;
  let snap: ReturnType<typeof snapshotOf> | undefined;
  return driveUntilSettled<ProgressOutputs>(
    async () => {
      const svc = await client.tryGet(type, inputs.name, inputs.namespace);
      snap = svc ? snapshotOf(svc) : undefined;
      if (snap && snap.line !== last) {
        if (last !== '') moves++;
        last = snap.line;
        console.log(`${new Date().toISOString().slice(11, 19)} ${inputs.name} ${snap.upgrading ? 'upgrading' : 'serving'}: ${snap.line}`);
      }
      if (!(snap && snap.observed && snap.ready && !snap.upgrading)) return { settled: false };
      const { kubeconfig: _secret, ...shape } = inputs;
      return { settled: true, result: { ...shape, ...(snap.active !== undefined ? { activeClusterName: snap.active } : {}), movesSeen: moves } };
    },
    {
      deadlineAt: Date.now() + inputs.deadlineSeconds * 1000,
      pollMs: inputs.pollMs,
      onDeadline: () => {
        throw new Error(`RayService ${inputs.namespace}/${inputs.name}: still ${snap ? (snap.upgrading ? `upgrading (${snap.line})` : 'not Ready') : 'missing'} after ${inputs.deadlineSeconds}s`);
      },
    },
  );
}

const operations = followedRolloutOperations(follow, ['goalSpecHash']);

/** `create`: follows the service's first rollout. */
export const create = operations.create;

/** `update`: follows the upgrade a spec change started. */
export const update = operations.update;

/** `diff`: any change of the goal or the settings re-runs `update` (the kubeconfig is not compared). */
export const diff = operations.diff;
