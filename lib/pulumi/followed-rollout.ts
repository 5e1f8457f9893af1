/**
 * What the operations of the dynamic resources that follow one object's rollout during
 * `pulumi up` (`RoleBasedGroupRollout`, `UpgradeProgress`) share (runtime side): their inputs'
 * common part, and `create`, `update` and `diff` around each one's own `follow`.
 */
import type * as pulumi from '@pulumi/pulumi';
import { KubeClient } from '../runtime/kube/client';
import { connectionOf, inputsChanged, resourceId, withKubeClient } from './connection';
import type { ProviderSettings } from './provider-module';

/** The inputs every rollout-following resource's provider receives. */
export interface FollowedRolloutInputs {
  /** API version of the followed object. */
  readonly apiVersion: string;
  /** Its name. */
  readonly name: string;
  /** Its namespace. */
  readonly namespace: string;
  /** Seconds one `pulumi up` may spend following before failing. */
  readonly deadlineSeconds: number;
  /** Poll period, ms. */
  readonly pollMs: number;
  /** Kubeconfig text (secret input, never an output). */
  readonly kubeconfig?: string;
  /** Kubeconfig context. */
  readonly context?: string;
}

/** The input properties `diff` compares for every rollout-following resource (the kubeconfig is a connection detail, not compared). */
const FOLLOWED_COMPARED = ['apiVersion', 'name', 'namespace', 'deadlineSeconds', 'pollMs', 'context'] as const;

/**
 * `create` and `update` of a rollout-following resource run `follow` with a client for its
 * connection (`create` answers the id `<namespace>/<name>`); `diff` re-runs `update` when any
 * common input or one of `compared` (the resource's own, e.g. its spec hash) changed.
 */
export function followedRolloutOperations<I extends FollowedRolloutInputs, O>(
  follow: (client: KubeClient, inputs: I) => Promise<O>,
  compared: readonly (keyof I)[],
): {
  create(config: ProviderSettings, inputs: I): Promise<pulumi.dynamic.CreateResult<O>>;
  update(config: ProviderSettings, news: I): Promise<pulumi.dynamic.UpdateResult<O>>;
  diff(olds: O, news: I): pulumi.dynamic.DiffResult;
} {
  const run = (config: ProviderSettings, inputs: I): Promise<O> => withKubeClient(connectionOf(config, inputs), (client) => follow(client, inputs));
  const keys: readonly (keyof I)[] = [...FOLLOWED_COMPARED, ...compared];
  return {
    async create(config, inputs) {
      return { id: resourceId(inputs), outs: await run(config, inputs) };
    },
    async update(config, news) {
      return { outs: await run(config, news) };
    },
    diff(olds, news) {
      return { changes: inputsChanged(olds, news, keys) };
    },
  };
}
