/**
 * Every Kubernetes API call the rayshift API server makes as itself, with the code that makes it:
 * the one table the chart's grants for it come from (`ownAccessRules`; the ones the built-in
 * `system:auth-delegator` ClusterRole grants are bound through that role instead), and that the
 * audit test (test/integration/apiserver-rbac-audit.test.ts) checks against kube-apiserver's audit
 * log. Everything else the API server sends is sent as its caller, through impersonation, whose rules
 * come from `REACHED` and `impersonationRules` in `api-server.ts`.
 */
import type { k8s } from 'cdk8s-plus-28';

/** One resource the API server reaches as itself. */
export interface ApiServerAccess {
  /** API group (`''` for the core group). */
  readonly group: string;
  /** Resource (plural). */
  readonly resource: string;
  /** Verbs the code sends. */
  readonly verbs: readonly string[];
  /** Granted by this built-in ClusterRole, which the chart binds, rather than by a rule of the chart's. */
  readonly grantedBy?: 'system:auth-delegator';
  /** The code that sends it (file: function). */
  readonly by: string;
  /** Why the API server needs it. */
  readonly why: string;
}

/** The table. */
export const API_SERVER_OWN_ACCESS: readonly ApiServerAccess[] = [
  {
    group: 'authentication.k8s.io', resource: 'tokenreviews', verbs: ['create'], grantedBy: 'system:auth-delegator',
    by: 'lib/apiserver/auth/token-authenticator.ts: TokenAuthenticator (and audience-overlap.ts at start-up)',
    why: "authenticate each caller's bearer token for the rayshift audience",
  },
  {
    group: 'authorization.k8s.io', resource: 'subjectaccessreviews', verbs: ['create'], grantedBy: 'system:auth-delegator',
    by: 'lib/apiserver/auth/access-reviewer.ts: AccessReviewer (writes and plans before work, steering verbs, GetSteeringAccess)',
    why: 'authorize a caller before work, and the steering verbs RBAC names as virtual subresources',
  },
  {
    group: '', resource: 'namespaces', verbs: ['list'],
    by: 'lib/apiserver/pagination.ts: listAllNamespacesPage',
    why: 'fan a cross-namespace list out, namespace by namespace, for a caller who may not list cluster-wide',
  },
];

/** The chart's rules for what the API server does as itself (the rows no built-in role grants). */
export function ownAccessRules(): k8s.PolicyRule[] {
  return API_SERVER_OWN_ACCESS.filter((a) => a.grantedBy === undefined).map((a) => ({ apiGroups: [a.group], resources: [a.resource], verbs: [...a.verbs] }));
}
