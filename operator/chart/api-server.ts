/**
 * An optional part of the operator's install chart: the rayshift core API server's ServiceAccount,
 * RBAC, Deployment and Service.
 *
 * RBAC: `system:auth-delegator` (TokenReview, SubjectAccessReview); impersonation of its callers
 * (users with their groups, UID and credential id; ServiceAccounts, which are impersonated by name
 * alone, see `impersonationHeaders`), either classic (`impersonate` verbs, as strong as its
 * holder's trust) or constrained (KEP-5284, Kubernetes ≥ 1.35 alpha / 1.36 beta:
 * `impersonate:user-info` and `impersonate:serviceaccount` plus `impersonate-on:<mode>:<verb>` only
 * on the resources the API reaches); and what it does as itself, from one table
 * (`api-server-access.ts`): list namespaces (to fan cross-namespace lists out). Every read and write of the API, steering included, is made as the
 * caller. Node's heap is sized from the container's memory limit (`node-heap.ts`).
 */
import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { componentDeployment, RAYSHIFT_IMAGE } from './component-deployment';
import { nodeHeapEnv } from './node-heap';
import { API_SERVER_OWN_ACCESS, ownAccessRules } from './api-server-access';

/** Name of the API server's ServiceAccount, RBAC objects, Deployment and Service. */
export const API_SERVER_NAME = 'rayshift-api-server';
/** HTTPS port of the API server (gRPC, Connect, REST, health, metrics). */
export const API_SERVER_PORT = 8443;

/** How the API server impersonates callers. */
export type ImpersonationMode = 'classic' | 'constrained';

/** Props of `ApiServer`. */
export interface ApiServerProps {
  /** Namespace (the operator's). */
  readonly namespace: string;
  /** Secret of type kubernetes.io/tls with the serving certificate (`tls.crt`, `tls.key`). */
  readonly tlsSecretName: string;
  /** Image (the operator's). @default "ghcr.io/rayshift/rayshift:0.1.0" */
  readonly image?: string;
  /** Image pull policy. @default "IfNotPresent" */
  readonly imagePullPolicy?: string;
  /** Replicas (stateless). @default 2 */
  readonly replicas?: number;
  /** HTTPS port of the container and the Service. @default 8443 (`API_SERVER_PORT`) */
  readonly port?: number;
  /** Impersonation rules. @default "classic" */
  readonly impersonation?: ImpersonationMode;
  /**
   * Container resources; a memory limit also sizes Node's heap (`NODE_OPTIONS`, see `nodeHeapOptions`).
   * @default requests 100m / 128Mi, limits 1 / 256Mi
   */
  readonly resources?: k8s.ResourceRequirements;
  /** Whether the server serves the dashboard under `/ui/` (false: `--no-dashboard`, the API alone). @default true */
  readonly dashboard?: boolean;
}

/** The resources the API reaches as the caller, with the verbs it uses on them. */
const REACHED: readonly { apiGroups: string[]; resources: string[]; verbs: string[] }[] = [
  { apiGroups: ['rayshift.dev', 'ray.io'], resources: ['rayservices'], verbs: ['get', 'list', 'watch', 'create', 'update', 'delete'] },
  // Steering verbs patch rayshift.dev RayServices (annotations, or the spec for rollback).
  { apiGroups: ['rayshift.dev'], resources: ['rayservices'], verbs: ['patch'] },
  { apiGroups: ['ray.io'], resources: ['rayclusters'], verbs: ['get', 'list', 'create', 'delete'] },
  { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'create', 'delete'] },
  { apiGroups: ['workloads.x-k8s.io'], resources: ['rolebasedgroups', 'coordinatedpolicies'], verbs: ['get', 'list'] },
  { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['list'] },
];

/**
 * What a user caller's impersonation carries besides the name: groups, UID and the credential id
 * (`authentication.kubernetes.io/credential-id`, which OIDC and other token authenticators set).
 * Authenticators that add other extras need them added to the rules.
 */
const USER_INFO_RESOURCES = ['users', 'groups', 'uids', 'userextras/authentication.kubernetes.io/credential-id'];

/**
 * The impersonation rules of `mode`. Classic impersonation checks users, groups and ServiceAccounts
 * in the core group and UIDs and extras in `authentication.k8s.io`; constrained impersonation checks
 * all of them in `authentication.k8s.io`, ServiceAccounts with their own verb, and each request's
 * verb per mode (`impersonate-on:user-info:<verb>`, `impersonate-on:serviceaccount:<verb>`).
 */
export function impersonationRules(mode: ImpersonationMode): k8s.PolicyRule[] {
  if (mode === 'classic') {
    return [
      { apiGroups: [''], resources: ['users', 'groups', 'serviceaccounts'], verbs: ['impersonate'] },
      { apiGroups: ['authentication.k8s.io'], resources: ['uids', 'userextras/authentication.kubernetes.io/credential-id'], verbs: ['impersonate'] },
    ];
  }
  return [
    { apiGroups: ['authentication.k8s.io'], resources: USER_INFO_RESOURCES, verbs: ['impersonate:user-info'] },
    { apiGroups: ['authentication.k8s.io'], resources: ['serviceaccounts'], verbs: ['impersonate:serviceaccount'] },
    ...REACHED.map((r) => ({ apiGroups: r.apiGroups, resources: r.resources, verbs: ['user-info', 'serviceaccount'].flatMap((m) => r.verbs.map((v) => `impersonate-on:${m}:${v}`)) })),
  ];
}

/** The API server's Deployment, Service, ServiceAccount and RBAC. */
export class ApiServer extends Construct {
  /** The Deployment. */
  public readonly deployment: k8s.KubeDeployment;
  /** The Service (`port`, HTTPS with HTTP/2). */
  public readonly service: k8s.KubeService;

  constructor(scope: Construct, id: string, props: ApiServerProps) {
    super(scope, id);
    const namespace = props.namespace;
    const labels = { 'app.kubernetes.io/name': API_SERVER_NAME, 'app.kubernetes.io/part-of': 'rayshift' };
    const subject = { kind: 'ServiceAccount', name: API_SERVER_NAME, namespace };
    new k8s.KubeServiceAccount(this, 'ServiceAccount', { metadata: { name: API_SERVER_NAME, namespace, labels }, automountServiceAccountToken: true });
    if (API_SERVER_OWN_ACCESS.some((a) => a.grantedBy === 'system:auth-delegator')) {
      new k8s.KubeClusterRoleBinding(this, 'AuthDelegator', {
        metadata: { name: `${API_SERVER_NAME}:auth-delegator`, labels },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:auth-delegator' },
        subjects: [subject],
      });
    }
    const roles: [string, k8s.PolicyRule[]][] = [
      ['impersonator', impersonationRules(props.impersonation ?? 'classic')],
      ['namespace-lister', ownAccessRules()],
    ];
    for (const [suffix, rules] of roles) {
      const name = `${API_SERVER_NAME}:${suffix}`;
      new k8s.KubeClusterRole(this, `${suffix}-role`, { metadata: { name, labels }, rules });
      new k8s.KubeClusterRoleBinding(this, `${suffix}-binding`, { metadata: { name, labels }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name }, subjects: [subject] });
    }
    const port = k8s.IntOrString.fromString('https');
    const listen = props.port ?? API_SERVER_PORT;
    const resources = props.resources ?? {
      requests: { cpu: k8s.Quantity.fromString('100m'), memory: k8s.Quantity.fromString('128Mi') },
      limits: { cpu: k8s.Quantity.fromString('1'), memory: k8s.Quantity.fromString('256Mi') },
    };
    const heapEnv = nodeHeapEnv(resources);
    this.deployment = componentDeployment(this, { name: API_SERVER_NAME, namespace, labels, replicas: props.replicas ?? 2 }, {
      securityContext: { runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [
        {
          name: 'api-server',
          image: props.image ?? RAYSHIFT_IMAGE,
          imagePullPolicy: props.imagePullPolicy ?? 'IfNotPresent',
          args: ['api-server', '--listen', `:${listen}`, '--tls-cert', '/etc/rayshift/tls/tls.crt', '--tls-key', '/etc/rayshift/tls/tls.key', ...(props.dashboard === false ? ['--no-dashboard'] : [])],
          ports: [{ name: 'https', containerPort: listen, protocol: 'TCP' }],
          livenessProbe: { httpGet: { path: '/healthz', port, scheme: 'HTTPS' }, periodSeconds: 10, timeoutSeconds: 2 },
          readinessProbe: { httpGet: { path: '/readyz', port, scheme: 'HTTPS' }, periodSeconds: 5, timeoutSeconds: 3 },
          resources,
          // Node sizes its heap from the machine, not the container: sized from the limit, or the pod is OOM-killed under load.
          ...(heapEnv.length === 0 ? {} : { env: heapEnv }),
          securityContext: { runAsNonRoot: true, allowPrivilegeEscalation: false, privileged: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
          volumeMounts: [{ name: 'tls', mountPath: '/etc/rayshift/tls', readOnly: true }],
        },
      ],
      volumes: [{ name: 'tls', secret: { secretName: props.tlsSecretName } }],
    });
    this.service = new k8s.KubeService(this, 'Service', {
      metadata: { name: API_SERVER_NAME, namespace, labels },
      spec: { selector: { 'app.kubernetes.io/name': API_SERVER_NAME }, ports: [{ name: 'https', port: listen, targetPort: port, appProtocol: 'https' }] },
    });
  }
}
