/** The authenticated caller of one request, as the Kubernetes API server's TokenReview names it. */

/** A Kubernetes user: what TokenReview returns and what impersonation and SubjectAccessReview take. */
export interface Caller {
  /** User name, e.g. `alice` or `system:serviceaccount:ns:sa`. */
  readonly username: string;
  /** User UID, when the authenticator gives one. */
  readonly uid?: string;
  /** Groups, including `system:authenticated`. */
  readonly groups: readonly string[];
  /** Extra attributes (e.g. `authentication.kubernetes.io/credential-id`). */
  readonly extra: Readonly<Record<string, readonly string[]>>;
}
