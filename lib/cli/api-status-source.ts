/**
 * `rayshift status` and the steering verbs through a rayshift API server: the RayService is read
 * with `GetRayService` and followed with the `WatchUpgrade` stream, and rebuilt as the Kubernetes
 * object `status` renders (the spec, the generation and the executor's status, which the API
 * passes on verbatim as `executor_status`), so the output is the kubeconfig path's. The spec is
 * read again whenever the watch reports a new generation (its `intervalSeconds` drives the countdown).
 * The watch ends after each completed upgrade; the source then resumes it from where it ended.
 */
import { Code, ConnectError } from '@connectrpc/connect';
import type { ApiClient } from '../apiserver/client';
import { specToKube } from '../apiserver/convert/rayservice';
import { UpgradeEventType, type UpgradeStatus } from '../apiserver/gen/rayshift/v1/upgrade_pb';
import type { KubeObject } from '../runtime/kube/types';
import { RAYSHIFT_RAYSERVICE } from '../spec/object-names';
import type { SteeringVerb } from '../engine/steering';
import type { JsonObject } from '../spec/read';
import type { StatusSource } from './status-source';

/** The RPC of each steering verb. */
const STEERING_RPCS = {
  pause: 'pauseRayService',
  resume: 'resumeRayService',
  promote: 'promoteRayService',
  abort: 'abortRayService',
  rollback: 'rollbackRayService',
  'retry-analysis': 'retryAnalysisRayService',
  'skip-analysis': 'skipAnalysisRayService',
} as const satisfies Record<SteeringVerb, string>;

export type { SteeringVerb } from '../engine/steering';

/** The RayService as the Kubernetes API would return it, from what the API server answered. */
function asKubeObject(namespace: string, name: string, spec: JsonObject, upgrade: UpgradeStatus | undefined): KubeObject {
  return {
    apiVersion: RAYSHIFT_RAYSERVICE.apiVersion,
    kind: RAYSHIFT_RAYSERVICE.kind,
    metadata: { namespace, name, generation: Number(upgrade?.generation ?? 0n) },
    spec,
    ...(upgrade?.executorStatus ? { status: upgrade.executorStatus } : {}),
  };
}

/** The `rayshift.dev` RayService `name` in `namespace`, read and followed through `api` (the caller closes `api`). */
export function apiStatusSource(api: ApiClient, namespace: string, name: string): StatusSource {
  let spec: JsonObject = {};
  let specGeneration: bigint | undefined;
  const read = async (): Promise<KubeObject | undefined> => {
    try {
      const svc = await api.rayServices.getRayService({ namespace, name });
      spec = specToKube(svc.spec);
      specGeneration = svc.generation;
      return asKubeObject(namespace, name, spec, svc.upgrade);
    } catch (e) {
      if (e instanceof ConnectError && e.code === Code.NotFound) return undefined;
      throw e;
    }
  };
  return {
    read,
    follow(listener) {
      const abort = new AbortController();
      const following = (async () => {
        let resourceVersion = '';
        while (!abort.signal.aborted) {
          for await (const event of api.rayServices.watchUpgrade({ namespace, name, resourceVersion }, { signal: abort.signal })) {
            if (event.type === UpgradeEventType.DELETED) return listener.deleted();
            const status = event.status;
            if (!status) continue;
            resourceVersion = status.resourceVersion;
            if (status.generation !== specGeneration && !(await read())) return listener.deleted();
            listener.changed(asKubeObject(namespace, name, spec, status));
          }
        }
      })().catch((e: unknown) => {
        if (!abort.signal.aborted) listener.failed(e);
      });
      return async () => {
        abort.abort();
        await following;
      };
    },
    close: () => undefined,
  };
}

/** Applies a steering verb through the API server (which checks that the caller may, and that the verb applies now). */
export async function steerThroughApi(api: ApiClient, verb: SteeringVerb, namespace: string, name: string): Promise<UpgradeStatus> {
  return api.rayServices[STEERING_RPCS[verb]]({ namespace, name });
}
