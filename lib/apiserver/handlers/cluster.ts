/**
 * Cluster CRUD (KubeRay-compatible) as the caller: creation reads each named compute template as
 * the caller (label-checked) and expands it into the RayCluster.
 */
import { Code, ConnectError, type ServiceImpl } from '@connectrpc/connect';
import { create } from '@bufbuild/protobuf';
import { EmptySchema } from '@bufbuild/protobuf/wkt';
import { dns1035LabelProblem } from '../../spec/names';
import { scopeOf } from '../auth/request-scope';
import { RAYCLUSTER } from '../../spec/object-names';
import { clusterFromKube, clusterToKube } from '../convert/cluster';
import { computeTemplateFromConfigMap } from '../convert/compute-template';
import { invalidArgument, type FieldViolation } from '../errors';
import { ListClustersResponseSchema, type Cluster, type ClusterService } from '../gen/rayshift/v1/cluster_pb';
import type { ComputeTemplate } from '../gen/rayshift/v1/compute_template_pb';
import { listAllNamespacesPage, listNamespacePage, pageRequest } from '../pagination';
import { readComputeTemplate } from './compute-template';
import type { HandlerDeps } from './deps';
import { authorizeVerb, kubeCall } from './kube-call';

/** Every violation of a cluster request (names, version, groups and their templates). */
function clusterViolations(c: Cluster, namespace: string): FieldViolation[] {
  const out: FieldViolation[] = [];
  const nameProblem = dns1035LabelProblem(c.name, 63);
  if (nameProblem) out.push({ field: 'cluster.name', description: nameProblem });
  if (c.namespace && c.namespace !== namespace) out.push({ field: 'cluster.namespace', description: `differs from the request's namespace ${namespace}` });
  if (!c.version) out.push({ field: 'cluster.version', description: 'is required (the Ray version, e.g. 2.52.0)' });
  const spec = c.clusterSpec;
  if (!spec?.headGroupSpec) {
    out.push({ field: 'cluster.cluster_spec.head_group_spec', description: 'is required' });
  } else if (!spec.headGroupSpec.computeTemplate) {
    out.push({ field: 'cluster.cluster_spec.head_group_spec.compute_template', description: 'is required' });
  }
  for (const [i, g] of (spec?.workerGroupSpec ?? []).entries()) {
    const at = `cluster.cluster_spec.worker_group_spec[${i}]`;
    if (!g.groupName) out.push({ field: `${at}.group_name`, description: 'is required' });
    if (!g.computeTemplate) out.push({ field: `${at}.compute_template`, description: 'is required' });
    if (g.minReplicas > g.replicas) out.push({ field: `${at}.min_replicas`, description: `${g.minReplicas} exceeds replicas ${g.replicas}` });
    if (g.maxReplicas > 0 && g.maxReplicas < g.replicas) out.push({ field: `${at}.max_replicas`, description: `${g.maxReplicas} is below replicas ${g.replicas}` });
  }
  return out;
}

/** The cluster handlers. */
export function clusters(deps: HandlerDeps): ServiceImpl<typeof ClusterService> {
  return {
    async createCluster(req, ctx) {
      const scope = scopeOf(ctx);
      const { kube } = scope;
      await authorizeVerb(scope, RAYCLUSTER, 'create', req.namespace);
      const c = req.cluster;
      if (!c) throw new ConnectError('cluster is required', Code.InvalidArgument);
      const violations = clusterViolations(c, req.namespace);
      if (violations.length > 0) throw invalidArgument('the cluster is invalid', violations);
      const spec = c.clusterSpec!;
      const names = new Set([spec.headGroupSpec!.computeTemplate, ...spec.workerGroupSpec.map((g) => g.computeTemplate)]);
      const templates = new Map<string, ComputeTemplate>();
      for (const name of names) templates.set(name, computeTemplateFromConfigMap(await readComputeTemplate(kube, req.namespace, name)));
      const subject = { kind: 'Cluster', namespace: req.namespace, name: c.name };
      return clusterFromKube(await kubeCall(subject, () => kube.create(clusterToKube(c, req.namespace, templates))));
    },

    async getCluster(req, ctx) {
      const subject = { kind: 'Cluster', namespace: req.namespace, name: req.name };
      return clusterFromKube(await kubeCall(subject, () => scopeOf(ctx).kube.get(RAYCLUSTER, req.name, req.namespace)));
    },

    async listClusters(req, ctx) {
      const { kube, caller } = scopeOf(ctx);
      const page = await kubeCall({ kind: 'Cluster', namespace: req.namespace }, () => listNamespacePage(kube, RAYCLUSTER, req.namespace, pageRequest(req, caller)));
      return create(ListClustersResponseSchema, { clusters: page.items.map(clusterFromKube), nextPageToken: page.nextPageToken });
    },

    async listAllClusters(req, ctx) {
      const { kube, caller } = scopeOf(ctx);
      const page = await kubeCall({ kind: 'Cluster' }, () => listAllNamespacesPage(kube, deps.server, RAYCLUSTER, pageRequest(req, caller)));
      return create(ListClustersResponseSchema, { clusters: page.items.map(clusterFromKube), nextPageToken: page.nextPageToken });
    },

    async deleteCluster(req, ctx) {
      const subject = { kind: 'Cluster', namespace: req.namespace, name: req.name };
      await kubeCall(subject, () => scopeOf(ctx).kube.delete(RAYCLUSTER, req.name, req.namespace, req.etag ? { preconditions: { resourceVersion: req.etag } } : {}));
      return create(EmptySchema);
    },
  };
}
