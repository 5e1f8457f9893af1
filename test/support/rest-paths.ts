/** REST paths of the core objects the install chart synthesizes, for tests that POST them raw. */

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
};

/** The collection path to POST a synthesized object to; throws for a kind it does not know. */
export function collectionPath(o: { apiVersion: string; kind: string; metadata: { namespace?: string } }): string {
  const [group, version] = o.apiVersion.includes('/') ? o.apiVersion.split('/') : ['', o.apiVersion];
  const base = group ? `/apis/${group}/${version}` : `/api/${version}`;
  const plural = PLURALS[o.kind];
  if (!plural) throw new Error(`no collection path known for ${o.kind}`);
  return `${base}${o.metadata.namespace ? `/namespaces/${o.metadata.namespace}` : ''}/${plural}`;
}
