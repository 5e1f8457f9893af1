import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { routerWeights } from '../engine/rbg-router-weight';
import { ProblemList } from '../spec/problem';
import type { CoordinationRule, RoleSpec } from '../spec/rbg';
import { asArray, asObject, isObject } from '../spec/read';
import {
  RBG_V1ALPHA1_POD_LABELS,
  SGLANG_BOOTSTRAP_PORT_ANNOTATION,
  RBG_V1ALPHA2_POD_LABELS,
  ROUTER_FOR_LABEL,
  ROUTER_REVISION_LABEL,
  ROUTER_RULE_LABEL,
} from '../spec/object-names';
import { RouterOptions, checkRouter, resolveRouter, routerName, routerRevision, type ResolvedRouterOptions } from '../spec/rbg-router';
import { HttpRoute } from './route';

/** Props of the routers of one coordination rule. */
export interface RoleBasedGroupRoutersProps {
  /** The group's name. */
  readonly group: string;
  /** The group's namespace. @default the chart's */
  readonly namespace?: string;
  /** The coordination rule's name. */
  readonly rule: string;
  /** The rule's router, as given (its defaults are applied here). */
  readonly router: RouterOptions;
  /** The release the group's templates make now (`routerRevision`). */
  readonly revision: string;
  /** The group's API version is v1alpha1, whose pods carry RBG's v1alpha1 labels. @default false */
  readonly v1alpha1?: boolean;
}

/**
 * The version-matched routers of one coordination rule: a ServiceAccount allowed to watch the
 * namespace's pods (sglang-router's Kubernetes discovery), one router Deployment and Service per
 * release, each selecting only that release's prefill and decode pods, and an HTTPRoute over the
 * releases' Services. Outside a rollout (no `previousRevision`, or the same as `revision`) there is
 * one router; during one, the old release's router stays and the route splits by the engine's weight
 * rule, starting with nothing ready on the new release (weight 0): a rayshift executor moves it.
 */
export class RoleBasedGroupRouters extends Construct {
  /** The HTTPRoute between the releases' routers. */
  public readonly route: HttpRoute;
  /** Each release's router Deployment, keyed by revision (the new one last). */
  public readonly deployments: Readonly<Record<string, ApiObject>>;
  /** Each release's router Service, keyed by revision. */
  public readonly services: Readonly<Record<string, ApiObject>>;

  constructor(scope: Construct, id: string, props: RoleBasedGroupRoutersProps) {
    super(scope, id);
    const { group, rule, revision, namespace } = props;
    const router = resolveRouter(props.router);
    const meta = (name: string) => ({ name, ...(namespace !== undefined ? { namespace } : {}) });
    const account = routerName(group, rule);
    new ApiObject(this, 'ServiceAccount', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta(account) });
    // Discovery reads pods only: least privilege, in the group's namespace.
    new ApiObject(this, 'Role', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: meta(account),
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] }],
    });
    new ApiObject(this, 'RoleBinding', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: meta(account),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: account },
      subjects: [{ kind: 'ServiceAccount', name: account, ...(namespace !== undefined ? { namespace } : {}) }],
    });
    const rolling = router.previousRevision !== undefined && router.previousRevision !== revision;
    const revisions = rolling ? [router.previousRevision!, revision] : [revision];
    const deployments: Record<string, ApiObject> = {};
    const services: Record<string, ApiObject> = {};
    for (const rev of revisions) {
      const labels = { [ROUTER_FOR_LABEL]: group, [ROUTER_RULE_LABEL]: rule, [ROUTER_REVISION_LABEL]: rev };
      deployments[rev] = new ApiObject(this, `Deployment-${rev}`, {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { ...meta(routerName(group, rule, rev)), labels },
        // No `replicas`: the operator owns it once a release's router is done (scaled to 0, and back
        // before that release gets traffic again). Kubernetes makes 1 at creation, and a re-apply
        // (Pulumi's server-side apply, a GitOps sync) that does not carry the field leaves its value.
        spec: {
          selector: { matchLabels: labels },
          template: { metadata: { labels }, spec: { serviceAccountName: account, containers: [routerContainer(props, router, rev)] } },
        },
      });
      services[rev] = new ApiObject(this, `Service-${rev}`, {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { ...meta(routerName(group, rule, rev)), labels },
        spec: { selector: labels, ports: [{ name: 'http', port: router.port, targetPort: router.port, protocol: 'TCP' }] },
      });
    }
    this.deployments = deployments;
    this.services = services;
    // At synthesis no replica of the new release is known to be ready: the rule's weight for that state.
    const weights = routerWeights([], false);
    const backend = (rev: string, weight: number) => ({ name: routerName(group, rule, rev), port: router.port, weight });
    this.route = new HttpRoute(this, 'Route', {
      // The labels name the route's group and rule: the operator watches only routes carrying them.
      metadata: { ...meta(routerName(group, rule)), labels: { [ROUTER_FOR_LABEL]: group, [ROUTER_RULE_LABEL]: rule } },
      parents: [router.gateway],
      rules: [{ backendRefs: rolling ? [backend(router.previousRevision!, weights.oldWeight), backend(revision, weights.newWeight)] : [backend(revision, 100)] }],
    });
  }
}

/** sglang-router in PD mode, discovering the prefill and decode pods of release `rev` of the group's roles in its own namespace. */
function routerContainer(props: RoleBasedGroupRoutersProps, router: ResolvedRouterOptions, rev: string): Record<string, unknown> {
  const { group } = props;
  const pod = props.v1alpha1 ? RBG_V1ALPHA1_POD_LABELS : RBG_V1ALPHA2_POD_LABELS;
  const selector = (role: string) => [`${pod.group}=${group}`, `${pod.role}=${role}`, `${ROUTER_REVISION_LABEL}=${rev}`];
  return {
    name: 'router',
    image: router.image,
    command: ['python3', '-m', 'sglang_router.launch_router'],
    args: [
      '--pd-disaggregation',
      '--service-discovery',
      '--service-discovery-namespace',
      '$(POD_NAMESPACE)',
      '--service-discovery-port',
      String(router.workerPort),
      '--prefill-selector',
      ...selector(router.prefill),
      '--decode-selector',
      ...selector(router.decode),
      '--host',
      '0.0.0.0',
      '--port',
      String(router.port),
    ],
    env: [{ name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } }],
    ports: [{ name: 'http', containerPort: router.port }],
    // Ready only once the router has a healthy prefill AND decode (sglang-router 0.3.2's /readiness
    // answers 503 "insufficient healthy workers" before): the executors move weight to a router only
    // when its Deployment is ready, and a router that listens but has discovered no pair fails every
    // request. Its discovery adds a Pod after its own health check, later than the Pod turns Ready.
    readinessProbe: { httpGet: { path: '/readiness', port: router.port }, periodSeconds: 2 },
  };
}

/** The rules whose `router` has no problem: only those render routers and mark templates (the others fail validation). */
export function routedRules(rules: readonly CoordinationRule[], executor: string): (CoordinationRule & { router: RouterOptions })[] {
  return rules.filter((r): r is CoordinationRule & { router: RouterOptions } => {
    if (r.router === undefined) return false;
    const problems = new ProblemList();
    checkRouter(problems, 'router', r.router, { ruleRoles: asArray(r.roles), rollingUpdate: r.rollingUpdate !== undefined, executor });
    return problems.result().errors.length === 0;
  });
}

/** The release (`routerRevision`) the given roles' prefill and decode templates make for `router`. */
export function releaseOf(roles: readonly RoleSpec[], router: ResolvedRouterOptions): string {
  const template = (name: string) => asObject(asArray(roles).find((role) => isObject(role) && role.name === name)).template;
  return routerRevision(template(router.prefill), template(router.decode));
}

/**
 * The roles with each routed rule's release on its prefill and decode pod templates
 * (`rayshift.dev/router-revision`), for that release's router to select them, and the prefill's
 * bootstrap port in the annotation sglang-router's discovery reads it from.
 */
export function withRouterMarks(roles: RoleSpec[], routed: readonly { readonly router: ResolvedRouterOptions; readonly revision: string }[]): RoleSpec[] {
  const marks = new Map<string, { revision: string; bootstrapPort?: number }>();
  for (const { router, revision } of routed) {
    marks.set(router.prefill, { revision, bootstrapPort: router.bootstrapPort });
    marks.set(router.decode, { revision });
  }
  return roles.map((role) => {
    const mark = marks.get(role.name);
    if (!mark) return role;
    const metadata = asObject(asObject(role.template).metadata);
    const annotations = mark.bootstrapPort === undefined ? metadata.annotations : { ...asObject(metadata.annotations), [SGLANG_BOOTSTRAP_PORT_ANNOTATION]: String(mark.bootstrapPort) };
    const labels = { ...asObject(metadata.labels), [ROUTER_REVISION_LABEL]: mark.revision };
    return { ...role, template: { ...role.template, metadata: { ...metadata, labels, ...(annotations !== undefined ? { annotations } : {}) } } } as RoleSpec;
  });
}
