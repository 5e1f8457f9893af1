/**
 * The per-request scope handlers work in: who the caller is, a Kubernetes client acting as them and
 * an authorizer for virtual subresources. Resolved once per call from the `Authorization` header,
 * before any handler runs, and passed to handlers as a Connect context value.
 */
import { Code, ConnectError, createContextKey, type HandlerContext } from '@connectrpc/connect';
import type { KubeClient } from '../../runtime/kube/client';
import type { ResourceAttributes } from './access-reviewer';
import type { Caller } from './caller';

/** What a handler may do on behalf of its caller. */
export interface RequestScope {
  /** The authenticated caller. */
  readonly caller: Caller;
  /** A Kubernetes client acting as the caller (impersonation). */
  readonly kube: KubeClient;
  /** Fails with PERMISSION_DENIED unless the caller may act on `attributes` (SubjectAccessReview). */
  authorize(attributes: ResourceAttributes): Promise<void>;
  /** Whether the caller may act on `attributes` (the same SubjectAccessReview as `authorize`, without failing). */
  allows(attributes: ResourceAttributes): Promise<boolean>;
  /** Fails with UNAUTHENTICATED once the caller's credentials stopped being valid (long streams call it). */
  revalidate(): Promise<void>;
  /** Keeps `kube` open (not closed as idle) until the returned release is called; long streams hold it. */
  keepAlive(): () => void;
}

/** Turns the `Authorization` header of a request into its scope. */
export interface ScopeResolver {
  /** The scope of a request with this `Authorization` header from `clientAddress`; fails with UNAUTHENTICATED. */
  resolve(authorization: string | null, clientAddress?: string): Promise<RequestScope>;
}

/** The context key under which the scope travels to handlers. */
export const REQUEST_SCOPE = createContextKey<RequestScope | undefined>(undefined, { description: 'rayshift request scope' });

/** The scope of the current call (set by the server before the handler runs). */
export function scopeOf(ctx: HandlerContext): RequestScope {
  const scope = ctx.values.get(REQUEST_SCOPE);
  if (!scope) throw new ConnectError('the caller is not authenticated', Code.Unauthenticated);
  return scope;
}
