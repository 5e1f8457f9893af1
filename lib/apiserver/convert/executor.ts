/** The Kubernetes kind behind each `Executor`. */
import { Code, ConnectError } from '@connectrpc/connect';
import { KUBERAY_RAYSERVICE, RAYSHIFT_RAYSERVICE } from '../../spec/object-names';
import { Executor } from '../gen/rayshift/v1/common_pb';

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
