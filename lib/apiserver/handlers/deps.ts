/** What every handler factory gets from the server. */
import type { KubeClient } from '../../runtime/kube/client';

/** Shared dependencies of the handlers. */
export interface HandlerDeps {
  /**
   * The server's own Kubernetes client. Used only where the caller's right was checked first
   * (steering after a SubjectAccessReview) or for data that is not the caller's to see (namespace
   * names, to fan a cross-namespace list out over).
   */
  readonly server: KubeClient;
}
