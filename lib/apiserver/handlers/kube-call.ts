/** Runs a Kubernetes call and maps its failure to a google.rpc code (see `toConnectError`). */
import type { KubeClient } from '../../runtime/kube/client';
import type { KubeObject, ResourceType } from '../../runtime/kube/types';
import type { RequestScope } from '../auth/request-scope';
import { rayServiceType } from '../convert/executor';
import { toConnectError, type Subject } from '../errors';
import type { Executor } from '../gen/rayshift/v1/common_pb';

/** The result of `call`, or a ConnectError describing `subject` when it fails. */
export async function kubeCall<T>(subject: Subject, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (e) {
    throw toConnectError(e, subject);
  }
}

/** The subject of a request about one RayService (its `namespace` and `name`). */
export function rayServiceSubject(req: { readonly namespace: string; readonly name: string }): Subject {
  return { kind: 'RayService', namespace: req.namespace, name: req.name };
}

/** The RayService a request names, read as `executor`'s resource type, or a ConnectError describing it when the read fails. */
export function readRayService(kube: KubeClient, req: { readonly namespace: string; readonly name: string }, executor: Executor): Promise<KubeObject> {
  return kubeCall(rayServiceSubject(req), () => kube.get(rayServiceType(executor), req.name, req.namespace));
}

/**
 * Fails with PERMISSION_DENIED unless the caller may `verb` objects of `type` in `namespace` (a
 * SubjectAccessReview). Writes, and the plan that models one, call it before they decode, convert or
 * validate anything the caller sent, so a caller without the right costs one cached review and
 * nothing else; the call itself is still made as the caller, so RBAC and admission decide it again.
 */
export function authorizeVerb(scope: RequestScope, type: ResourceType, verb: 'get' | 'create' | 'update', namespace: string, name?: string): Promise<void> {
  const slash = type.apiVersion.indexOf('/');
  const group = slash < 0 ? '' : type.apiVersion.slice(0, slash);
  return scope.authorize({ group, resource: type.plural ?? `${type.kind.toLowerCase()}s`, verb, namespace, ...(name ? { name } : {}) });
}
