/**
 * The operator's narrower Pod grant. RBAC cannot limit `patch pods` to one label, and a Pod patch
 * can change a container's image: with cluster-wide `patch pods` alone, the operator's identity could
 * run code in any Pod. This ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1, Kubernetes
 * ≥ 1.30) refuses every Pod update by that identity except a change of the `ray.io/serve` label to
 * `true` or `false` (what `labelHeadPods` writes): spec, every other label, annotations, owner
 * references and finalizers must stay as they were. Other identities are not matched.
 */
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { SERVE_LABEL } from '../../lib/spec/object-names';

/** The CEL rules of the policy, each with the message kube-apiserver returns when it fails. */
const HEAD_SERVE_LABEL_RULES: readonly { readonly expression: string; readonly message: string }[] = [
  { expression: 'object.spec == oldObject.spec', message: 'the rayshift operator may not change a Pod\'s spec' },
  {
    expression: `variables.labels.all(k, k == '${SERVE_LABEL}' || (k in variables.oldLabels && variables.oldLabels[k] == variables.labels[k])) && variables.oldLabels.all(k, k == '${SERVE_LABEL}' || k in variables.labels)`,
    message: `the rayshift operator may change no Pod label but ${SERVE_LABEL}`,
  },
  {
    expression: `!('${SERVE_LABEL}' in variables.labels) || variables.labels['${SERVE_LABEL}'] in ['true', 'false']`,
    message: `the rayshift operator may set ${SERVE_LABEL} only to "true" or "false"`,
  },
  {
    expression: 'object.metadata.?annotations == oldObject.metadata.?annotations && object.metadata.?ownerReferences == oldObject.metadata.?ownerReferences && object.metadata.?finalizers == oldObject.metadata.?finalizers',
    message: 'the rayshift operator may not change a Pod\'s annotations, owner references or finalizers',
  },
];

/** Creates the policy and its binding (Deny) for the ServiceAccount `namespace/name`; returns the policy's name. */
export function headServeLabelPolicy(scope: Construct, name: string, serviceAccount: { namespace: string; name: string }, labels: Record<string, string>): string {
  const user = `system:serviceaccount:${serviceAccount.namespace}:${serviceAccount.name}`;
  const policyName = `${name}-pod-labels`;
  new ApiObject(scope, 'PodLabelPolicy', {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: policyName, labels },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], operations: ['UPDATE'] }] },
      // Only the operator's own requests: every other identity keeps what its RBAC allows.
      matchConditions: [{ name: 'rayshift-operator', expression: `request.userInfo.username == '${user}'` }],
      variables: [
        { name: 'labels', expression: 'object.metadata.?labels.orValue({})' },
        { name: 'oldLabels', expression: 'oldObject.metadata.?labels.orValue({})' },
      ],
      validations: HEAD_SERVE_LABEL_RULES.map((r) => ({ expression: r.expression, message: r.message })),
    },
  });
  new ApiObject(scope, 'PodLabelPolicyBinding', {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: policyName, labels },
    spec: { policyName, validationActions: ['Deny'] },
  });
  return policyName;
}
