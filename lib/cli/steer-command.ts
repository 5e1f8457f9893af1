/**
 * The steering verbs (`pause`, `resume`, `promote`, `abort`, `rollback`, `retry-analysis`,
 * `skip-analysis`) of RayServices, and `rollback rbg/NAME` of RoleBasedGroup rollouts, over a
 * kubeconfig or, with `--api-server`, through the rayshift API server. The same rules decide in
 * both ways: lib/engine/steering.ts and lib/engine/rbg-steering.ts.
 */
import { KubeClient } from '../runtime/kube/client';
import { retryOnConflict } from '../runtime/kube/retry';
import { KnownTypes } from '../runtime/kube/types';
import { RAYSHIFT_RAYSERVICE } from '../spec/object-names';
import { steeringPatch, steeringRefusal, steeringStateOf } from '../engine/steering';
import { asObject } from '../spec/read';
import { ApiConnectionOptions, apiConnectionProblem } from './api-options';
import type { SteeringVerb } from './api-status-source';
import { EXIT, Output } from './commands';
import { KubeconfigOptions, clientFor, loadApiClient, parseTarget, throughApi, usageError } from './status-command';

/** Options of the steering verbs. */
export interface SteerOptions extends ApiConnectionOptions, KubeconfigOptions {
  /** Namespace. @default the kubeconfig context's (`default` with `apiServer`) */
  readonly namespace?: string;
}

/** What each steering verb has done, as printed after the object. */
const STEERED: Readonly<Record<SteeringVerb, string>> = {
  pause: 'paused: no further step until resumed',
  resume: 'resumed',
  promote: 'promoting: the upgrade finishes without waiting for intervals',
  abort: 'aborting: traffic and capacity return to the active cluster',
  rollback: "rolling back: the spec is the serving cluster's again",
  'retry-analysis': 'retrying analysis: the failed run is measured again from now',
  'skip-analysis': 'skipping analysis: the failed run counts as passed',
};

/**
 * The user the cluster authenticates the kubeconfig as (a SelfSubjectReview), for the last-steering
 * record; `''` when the cluster will not say (the record is informational: the audit log names the writer).
 */
async function reviewedUser(client: KubeClient): Promise<string> {
  try {
    const review = await client.create({ apiVersion: KnownTypes.SelfSubjectReview.apiVersion, kind: KnownTypes.SelfSubjectReview.kind, metadata: {} });
    const username = asObject(asObject(review.status).userInfo).username;
    return typeof username === 'string' ? username : '';
  } catch {
    return '';
  }
}

/**
 * `rayshift pause|resume|promote|abort|rollback|retry-analysis|skip-analysis NAME`. Through a kubeconfig it checks that the verb
 * applies now and writes its patch (the steering rules of lib/engine/steering.ts, which the API
 * server applies too); through `--api-server` it calls the verb's RPC, which also checks the
 * caller's right to the verb (`rollback` only goes that way).
 */
export async function steerCommand(verb: SteeringVerb, target: string, opts: SteerOptions, io: Output): Promise<number> {
  const { rbg, name } = parseTarget(target);
  const problem = apiConnectionProblem(opts) ?? (rbg && verb !== 'rollback' ? `${verb} applies to RayServices; a RoleBasedGroup rollout takes rollback only` : undefined);
  if (problem !== undefined) return usageError(io, problem);
  if (rbg) return steerGroup(name, opts, io);
  const notFound = (namespace: string) => `${io.errStyle.red('error:')} RayService ${namespace}/${name} (rayshift.dev/v1alpha1) not found\n`;
  if (opts.apiServer !== undefined) {
    const namespace = opts.namespace ?? 'default';
    const modules = await loadApiClient();
    return throughApi(modules, { ...opts, apiServer: opts.apiServer }, { verb, namespace, name }, io, async (api) => {
      try {
        await modules.steerThroughApi(api, verb, namespace, name);
      } catch (e) {
        if (!(e instanceof modules.ConnectError && e.code === modules.Code.NotFound)) throw e;
        io.err(notFound(namespace));
        return EXIT.invalid;
      }
      io.out(`RayService ${namespace}/${name} ${STEERED[verb]}\n`);
      return EXIT.ok;
    });
  }
  if (verb === 'rollback') return usageError(io, "rollback goes through the API server, which recovers the serving cluster's spec: give --api-server");
  const client = clientFor(opts, io);
  if (!client) return EXIT.invalid;
  const namespace = opts.namespace ?? client.namespace ?? 'default';
  try {
    const user = await reviewedUser(client);
    // The same rules as the API server (lib/engine/steering.ts), on a fresh read guarded by its resourceVersion.
    const refusal = await retryOnConflict(async () => {
      const svc = await client.tryGet(RAYSHIFT_RAYSERVICE, name, namespace);
      if (!svc) return notFound(namespace);
      const state = steeringStateOf(svc);
      const why = steeringRefusal(verb, state);
      if (why !== undefined) return `${io.errStyle.red('error:')} cannot ${verb} RayService ${namespace}/${name}: ${why}\n`;
      const patch = steeringPatch(verb, state, { verb, user, reason: '', time: new Date().toISOString() });
      await client.patchMerge(RAYSHIFT_RAYSERVICE, name, namespace, { ...patch, metadata: { ...patch.metadata, resourceVersion: svc.metadata.resourceVersion } });
      return undefined;
    });
    if (refusal !== undefined) {
      io.err(refusal);
      return EXIT.invalid;
    }
    io.out(`RayService ${namespace}/${name} ${STEERED[verb]}\n`);
    return EXIT.ok;
  } finally {
    client.close();
  }
}

/** `rayshift rollback rbg/NAME`: through the API server's RollbackRoleBasedGroup, or a kubeconfig (lib/cli/rbg-steer.ts). */
async function steerGroup(name: string, opts: SteerOptions, io: Output): Promise<number> {
  const done = (namespace: string) => io.out(`RoleBasedGroup ${namespace}/${name} rolling back: every coordinated role returns to the revision before the rollout, in tandem\n`);
  const notFound = (namespace: string) => `${io.errStyle.red('error:')} RoleBasedGroup ${namespace}/${name} (workloads.x-k8s.io) not found\n`;
  if (opts.apiServer !== undefined) {
    const namespace = opts.namespace ?? 'default';
    const modules = await loadApiClient();
    return throughApi(modules, { ...opts, apiServer: opts.apiServer }, { verb: 'rollback', namespace, name }, io, async (api) => {
      try {
        await api.roleBasedGroups.rollbackRoleBasedGroup({ namespace, name });
      } catch (e) {
        if (!(e instanceof modules.ConnectError && e.code === modules.Code.NotFound)) throw e;
        io.err(notFound(namespace));
        return EXIT.invalid;
      }
      done(namespace);
      return EXIT.ok;
    });
  }
  const client = clientFor(opts, io);
  if (!client) return EXIT.invalid;
  const namespace = opts.namespace ?? client.namespace ?? 'default';
  try {
    const { rollbackGroup } = await import('../runtime/rbg/rollback-request');
    const outcome = await rollbackGroup(client, namespace, name, { verb: 'rollback', user: await reviewedUser(client), reason: '', time: new Date().toISOString() });
    if (outcome.done) {
      done(namespace);
      return EXIT.ok;
    }
    io.err(outcome.missing ? notFound(namespace) : `${io.errStyle.red('error:')} cannot rollback RoleBasedGroup ${namespace}/${name}: ${outcome.refusal}\n`);
    return EXIT.invalid;
  } finally {
    client.close();
  }
}
