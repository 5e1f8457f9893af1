/**
 * The rayshift operator's install chart: the `rayservices.rayshift.dev` CRD (generated from KubeRay's
 * RayService CRD at `npm run import` time, so synthesis needs no upstream file), a ServiceAccount,
 * least-privilege RBAC, and a hardened Deployment running `node bin/rayshift.js operator` with
 * leader election.
 */
import { Chart, ChartProps } from 'cdk8s';
import { ApiServer, ApiServerProps } from './api-server';
import { k8s } from 'cdk8s-plus-28';
import { Construct, Node } from 'constructs';
import { componentDeployment, RAYSHIFT_IMAGE } from './component-deployment';
import { ValidatedObject } from '../../lib/cdk8s/validated-object';
import { generatedRayshiftRayServiceCrd } from '../../lib/crds/generated-crd';
import { rayshiftRayServiceCrd } from '../../lib/crds/rayshift-crd';
import { ProblemList, ValidationResult, formatProblem } from '../../lib/spec/problem';
import { validateSharding } from '../../lib/spec/sharding';
import { JsonObject, asArray, asObject } from '../../lib/spec/read';
import { RAYSHIFT_API_VERSION } from '../../lib/spec/rayservice';
import { ApiAccess, accessResource, grantedAccess } from './operator-access';
import { headServeLabelPolicy } from './pod-label-policy';
import { nodeHeapEnv } from './node-heap';

/** Name shared by the ServiceAccount, RBAC objects and Deployment. */
export const OPERATOR_NAME = 'rayshift-operator';
/** Default namespace of the operator. */
export const OPERATOR_NAMESPACE = 'rayshift-system';
/** The Lease the operator replicas elect a leader with (in the operator's namespace). */
export const OPERATOR_LEASE_NAME = 'rayshift-operator-leader';
/** Port serving `/metrics`, `/healthz` (liveness) and `/readyz` (readiness). */
export const OPERATOR_HTTP_PORT = 8080;
/** UID/GID the operator runs as (`rayshift` in the image of scripts/build-operator-image.sh, `node` in operator/Dockerfile's). */
export const OPERATOR_UID = 1000;

/** An RBAC rule and why the operator needs it. */
export interface JustifiedRule {
  /** The rule. */
  readonly rule: k8s.PolicyRule;
  /** Why the operator needs exactly these verbs. */
  readonly why: string;
}

/** The Ray dashboard token Secrets the operator may read (`OperatorChartProps.rayTokenAuth`). */
export interface RayTokenAuth {
  /** Names of the Secrets (key `auth_token`) that clusters with token auth name in `authOptions.secretName`. */
  readonly secretNames: readonly string[];
}

/** Props of `OperatorChart`. */
export interface OperatorChartProps extends ChartProps {
  /**
   * KubeRay's RayService CRD (parsed) of another supported release, to build the rayshift CRD from
   * with `rayshiftRayServiceCrd` instead of using the generated one.
   * @default the committed CRD, generated from the newest supported KubeRay (`RAYSHIFT_CRD_KUBERAY_VERSION`)
   */
  readonly kubeRayRayServiceCrd?: unknown;
  /** Namespace of the operator. @default "rayshift-system" */
  readonly operatorNamespace?: string;
  /** Emit the Namespace object too. @default true */
  readonly createNamespace?: boolean;
  /** Operator image. @default "ghcr.io/rayshift/rayshift:0.1.0" */
  readonly image?: string;
  /** Image pull policy. @default "IfNotPresent" */
  readonly imagePullPolicy?: string;
  /** Replicas; with one shard one leads and the others stand by. @default 2 */
  readonly replicas?: number;
  /**
   * Shards the services and groups are hashed into (`rayshift operator --shards`). Above 1 every
   * replica works, on the shards it holds through one Lease each (docs/sharding.md); use several
   * per replica (e.g. 4 × replicas) so that a replica joining or leaving moves small parts.
   * @default 1 (leader election: one replica works)
   */
  readonly shards?: number;
  /**
   * Grant `get` on these Secrets only (by name, in any namespace), for RayClusters with Ray token
   * auth: each such cluster must name one of them in `authOptions.secretName`. @default no Secrets
   */
  readonly rayTokenAuth?: RayTokenAuth;
  /** Container resources; a memory limit also sizes Node's heap (`NODE_OPTIONS`, node-heap.ts). @default requests 100m / 128Mi, limits 500m / 256Mi */
  readonly resources?: k8s.ResourceRequirements;
  /** Arguments appended after `operator --leader-elect`. @default none */
  readonly extraArgs?: readonly string[];
  /**
   * Also install the core API server (Deployment, Service and its RBAC: TokenReview,
   * SubjectAccessReview and impersonation), serving TLS from this Secret. @default not installed
   */
  readonly apiServer?: Omit<ApiServerProps, 'namespace' | 'image' | 'imagePullPolicy'>;
}

/** The rule granting one entry of the access table (operator-access.ts). */
function ruleOf(a: ApiAccess, names: { lease: string; rayTokenAuthSecrets: readonly string[] }): JustifiedRule {
  const resourceNames = a.resourceNames === undefined ? undefined : a.resourceNames === 'lease' ? [names.lease] : [...names.rayTokenAuthSecrets];
  return {
    rule: { apiGroups: [a.group], resources: [accessResource(a)], ...(resourceNames ? { resourceNames } : {}), verbs: [...a.verbs] },
    why: a.why,
  };
}

/**
 * Cluster-wide rules, generated from the access table (`OPERATOR_API_ACCESS`): RayServices live in
 * any namespace, and so do the RayClusters, Services, Gateways and routes the operator creates next
 * to them. No wildcards, no `escalate`/`bind`, no verb the code does not send.
 */
export function operatorClusterRules(opts: { rayTokenAuth?: RayTokenAuth } = {}): JustifiedRule[] {
  const secrets = opts.rayTokenAuth?.secretNames ?? [];
  return grantedAccess({ rayTokenAuth: secrets.length > 0 })
    .filter((a) => a.scope === 'cluster')
    .map((a) => ruleOf(a, { lease: OPERATOR_LEASE_NAME, rayTokenAuthSecrets: secrets }));
}

/** Rules in the operator's own namespace, from the access table: the leader-election Lease, and a sharded operator's Leases. */
export function operatorNamespaceRules(leaseName = OPERATOR_LEASE_NAME, opts: { shards?: number } = {}): JustifiedRule[] {
  return grantedAccess({ shards: (opts.shards ?? 1) > 1 })
    .filter((a) => a.scope === 'operator-namespace')
    .map((a) => ruleOf(a, { lease: leaseName, rayTokenAuthSecrets: [] }));
}

/** A finished rayshift CRD as a validated construct: checks at synth that the CRD carries what the operator relies on. */
export class RayshiftCrd extends ValidatedObject {
  /** The CRD it synthesizes. */
  public readonly crd: JsonObject;

  constructor(scope: Construct, id: string, crd: JsonObject) {
    super(scope, id, { apiVersion: String(crd.apiVersion), kind: String(crd.kind), metadata: { name: String(asObject(crd.metadata).name) } });
    this.crd = crd;
  }

  protected renderSpec(): any {
    return this.crd.spec;
  }

  protected validateManifest(manifest: unknown): ValidationResult {
    return validateRayshiftCrd(manifest);
  }
}

/** Checks a rayshift CRD manifest: one served storage version with the status subresource, printer columns, a structural status and CEL rules. */
export function validateRayshiftCrd(manifest: unknown): ValidationResult {
  const problems = new ProblemList();
  const spec = asObject(asObject(manifest).spec);
  const [group, version] = RAYSHIFT_API_VERSION.split('/');
  if (spec.group !== group) problems.error('spec.group', `must be ${group}; got ${JSON.stringify(spec.group)}`);
  const versions = asArray(spec.versions).map(asObject);
  if (versions.length !== 1 || versions[0].name !== version || versions[0].served !== true || versions[0].storage !== true) {
    problems.error('spec.versions', `must be exactly ${version}, served and stored`);
    return problems.result();
  }
  const v = versions[0];
  if (asObject(v.subresources).status === undefined) problems.error('spec.versions[0].subresources.status', 'is required: the operator writes status through it');
  if (asArray(v.additionalPrinterColumns).length === 0) problems.error('spec.versions[0].additionalPrinterColumns', 'must list the phase, cluster, weight and capacity columns');
  const root = asObject(asObject(v.schema).openAPIV3Schema);
  const status = asObject(asObject(root.properties).status);
  if (status.type !== 'object' || status['x-kubernetes-preserve-unknown-fields'] === true) {
    problems.error('spec.versions[0].schema.openAPIV3Schema.properties.status', 'must be a structural schema, not preserve-unknown-fields');
  }
  const specSchema = asObject(asObject(root.properties).spec);
  if (asArray(specSchema['x-kubernetes-validations']).length === 0) problems.error('spec.versions[0].schema.openAPIV3Schema.properties.spec', 'must carry the CEL rules');
  return problems.result();
}

/** The operator's install chart. */
export class OperatorChart extends Chart {
  /** The CRD construct. */
  public readonly crd: RayshiftCrd;
  /** The ServiceAccount. */
  public readonly serviceAccount: k8s.KubeServiceAccount;
  /** The ClusterRole. */
  public readonly clusterRole: k8s.KubeClusterRole;
  /** The leader-election Role. */
  public readonly role: k8s.KubeRole;
  /** The Deployment. */
  public readonly deployment: k8s.KubeDeployment;

  constructor(scope: Construct, id: string, props: OperatorChartProps = {}) {
    super(scope, id, { ...props, disableResourceNameHashes: props.disableResourceNameHashes ?? true });
    const namespace = props.operatorNamespace ?? OPERATOR_NAMESPACE;
    const labels = { 'app.kubernetes.io/name': OPERATOR_NAME, 'app.kubernetes.io/component': 'operator', 'app.kubernetes.io/part-of': 'rayshift' };

    if (props.createNamespace ?? true) {
      new k8s.KubeNamespace(this, 'Namespace', { metadata: { name: namespace, labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } } });
    }
    const crd = props.kubeRayRayServiceCrd === undefined ? generatedRayshiftRayServiceCrd() : rayshiftRayServiceCrd(props.kubeRayRayServiceCrd);
    this.crd = new RayshiftCrd(this, 'Crd', crd);

    this.serviceAccount = new k8s.KubeServiceAccount(this, 'ServiceAccount', {
      metadata: { name: OPERATOR_NAME, namespace, labels },
      automountServiceAccountToken: true,
    });
    const subject = { kind: 'ServiceAccount', name: OPERATOR_NAME, namespace };

    const clusterRules = operatorClusterRules({ rayTokenAuth: props.rayTokenAuth });
    this.clusterRole = new k8s.KubeClusterRole(this, 'ClusterRole', {
      metadata: { name: OPERATOR_NAME, labels },
      rules: clusterRules.map((r) => r.rule),
    });
    new k8s.KubeClusterRoleBinding(this, 'ClusterRoleBinding', {
      metadata: { name: OPERATOR_NAME, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: OPERATOR_NAME },
      subjects: [subject],
    });
    const nsRules = operatorNamespaceRules(OPERATOR_LEASE_NAME, { shards: props.shards });
    this.role = new k8s.KubeRole(this, 'LeaderElectionRole', {
      metadata: { name: `${OPERATOR_NAME}-leader-election`, namespace, labels },
      rules: nsRules.map((r) => r.rule),
    });
    new k8s.KubeRoleBinding(this, 'LeaderElectionRoleBinding', {
      metadata: { name: `${OPERATOR_NAME}-leader-election`, namespace, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: `${OPERATOR_NAME}-leader-election` },
      subjects: [subject],
    });

    // `patch pods` is cluster-wide (head Pods live in any namespace); the policy narrows it to the serve label.
    headServeLabelPolicy(this, OPERATOR_NAME, { namespace, name: OPERATOR_NAME }, labels);

    const port = k8s.IntOrString.fromString('http');
    const resources = props.resources ?? {
      requests: { cpu: k8s.Quantity.fromString('100m'), memory: k8s.Quantity.fromString('128Mi') },
      limits: { cpu: k8s.Quantity.fromString('500m'), memory: k8s.Quantity.fromString('256Mi') },
    };
    this.deployment = componentDeployment(this, { name: OPERATOR_NAME, namespace, labels, replicas: props.replicas ?? 2 }, {
      terminationGracePeriodSeconds: 30,
      securityContext: {
        runAsNonRoot: true,
        runAsUser: OPERATOR_UID,
        runAsGroup: OPERATOR_UID,
        seccompProfile: { type: 'RuntimeDefault' },
      },
      affinity: {
        podAntiAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            { weight: 100, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { 'app.kubernetes.io/name': OPERATOR_NAME } } } },
          ],
        },
      },
      containers: [
        {
          name: 'operator',
          image: props.image ?? RAYSHIFT_IMAGE,
          imagePullPolicy: props.imagePullPolicy ?? 'IfNotPresent',
          args: ['operator', '--leader-elect', ...((props.shards ?? 1) > 1 ? ['--shards', String(props.shards)] : []), ...(props.extraArgs ?? [])],
          env: [
            { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
            { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
            { name: 'RAYSHIFT_LEASE_NAME', value: OPERATOR_LEASE_NAME },
            { name: 'RAYSHIFT_HTTP_PORT', value: String(OPERATOR_HTTP_PORT) },
            // Node sizes its heap from the machine, not the container (node-heap.ts).
            ...nodeHeapEnv(resources),
          ],
          ports: [{ name: 'http', containerPort: OPERATOR_HTTP_PORT, protocol: 'TCP' }],
          livenessProbe: { httpGet: { path: '/healthz', port }, initialDelaySeconds: 10, periodSeconds: 10, timeoutSeconds: 2, failureThreshold: 3 },
          readinessProbe: { httpGet: { path: '/readyz', port }, initialDelaySeconds: 2, periodSeconds: 5, timeoutSeconds: 2, failureThreshold: 3 },
          resources,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: OPERATOR_UID,
            allowPrivilegeEscalation: false,
            privileged: false,
            readOnlyRootFilesystem: true,
            capabilities: { drop: ['ALL'] },
          },
          volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
        },
      ],
      volumes: [{ name: 'tmp', emptyDir: { sizeLimit: k8s.Quantity.fromString('64Mi') } }],
    });

    Node.of(this).addValidation({ validate: () => [...rbacProblems([...clusterRules, ...nsRules]), ...validateSharding({ shards: props.shards }).errors.map(formatProblem)] });
    if (props.apiServer) {
      new ApiServer(this, 'ApiServer', { ...props.apiServer, namespace, image: props.image, imagePullPolicy: props.imagePullPolicy });
    }
  }
}

/** Wildcards, privilege-escalation verbs and unjustified rules, as synth errors. */
export function rbacProblems(rules: readonly JustifiedRule[]): string[] {
  const out: string[] = [];
  rules.forEach(({ rule, why }, i) => {
    const all = [...(rule.apiGroups ?? []), ...(rule.resources ?? []), ...rule.verbs, ...(rule.resourceNames ?? [])];
    if (all.some((s) => s.includes('*'))) out.push(`RBAC rule ${i} (${why}) uses a wildcard`);
    if (rule.verbs.some((v) => ['escalate', 'bind', 'impersonate'].includes(v))) out.push(`RBAC rule ${i} (${why}) grants privilege escalation`);
    if (!why) out.push(`RBAC rule ${i} has no justification`);
  });
  return out;
}
