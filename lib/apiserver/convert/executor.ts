/** The Kubernetes kind behind each `Executor`. */
import { Code, ConnectError } from '@connectrpc/connect';
import { RAYSHIFT_RAYSERVICE } from '../../runtime/rayservice/names';
import { Executor } from '../gen/rayshift/v1/common_pb';

/** KubeRay's RayService. */
export const KUBERAY_RAYSERVICE = { apiVersion: 'ray.io/v1', kind: 'RayService', plural: 'rayservices', namespaced: true } as const;

/** The RayService resource type an executor works on (unspecified means the rayshift operator). */
export function rayServiceType(executor: Executor): typeof RAYSHIFT_RAYSERVICE | typeof KUBERAY_RAYSERVICE {
  return executor === Executor.KUBERAY ? KUBERAY_RAYSERVICE : RAYSHIFT_RAYSERVICE;
}

/** The executor of a RayService object, from its apiVersion. */
export function executorOf(apiVersion: string): Executor {
  if (apiVersion === KUBERAY_RAYSERVICE.apiVersion) return Executor.KUBERAY;
  if (apiVersion === RAYSHIFT_RAYSERVICE.apiVersion) return Executor.OPERATOR;
  throw new ConnectError(`unsupported RayService apiVersion ${apiVersion}`, Code.Internal);
}
