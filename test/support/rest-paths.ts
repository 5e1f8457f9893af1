/** REST paths for tests that talk to the API server raw: the core objects the install chart synthesizes, and routes. */

const PLURALS: Record<string, string> = {
  Namespace: 'namespaces',
  CustomResourceDefinition: 'customresourcedefinitions',
  ServiceAccount: 'serviceaccounts',
  ClusterRole: 'clusterroles',
  ClusterRoleBinding: 'clusterrolebindings',
  Role: 'roles',
  RoleBinding: 'rolebindings',
  ValidatingAdmissionPolicy: 'validatingadmissionpolicies',
  ValidatingAdmissionPolicyBinding: 'validatingadmissionpolicybindings',
  Deployment: 'deployments',
  Service: 'services',
  HTTPRoute: 'httproutes',
  RoleBasedGroup: 'rolebasedgroups',
};

/** The collection path to POST a synthesized object to; throws for a kind it does not know. */
export function collectionPath(o: { apiVersion: string; kind: string; metadata: { namespace?: string } }): string {
  const [group, version] = o.apiVersion.includes('/') ? o.apiVersion.split('/') : ['', o.apiVersion];
  const base = group ? `/apis/${group}/${version}` : `/api/${version}`;
  const plural = PLURALS[o.kind];
  if (!plural) throw new Error(`no collection path known for ${o.kind}`);
  return `${base}${o.metadata.namespace ? `/namespaces/${o.metadata.namespace}` : ''}/${plural}`;
}

/** REST path of a Gateway API v1 route, written out here rather than taken from the route writer under test. */
export function routePath(kind: 'HTTPRoute' | 'GRPCRoute', namespace: string, name: string): string {
  return `/apis/gateway.networking.k8s.io/v1/namespaces/${namespace}/${kind === 'GRPCRoute' ? 'grpcroutes' : 'httproutes'}/${name}`;
}
