/** What every handler factory gets from the server. */
import type { KubeClient } from '../../runtime/kube/client';

/** Shared dependencies of the handlers. */
export interface HandlerDeps {
  /**
   * The server's own Kubernetes client. Used only for data that is not the caller's to see
   * (namespace names, to fan a cross-namespace list out over); it never writes: every write is made
   * as the caller (`scopeOf(ctx).kube`).
   */
  readonly server: KubeClient;
}
