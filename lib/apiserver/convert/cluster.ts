/**
 * KubeRay-compatible clusters as `ray.io/v1` RayClusters. Creation expands each group's compute
 * template as KubeRay's apiserver does: container `ray-head`/`ray-worker`, requests = limits = the
 * template's cpu and memory, GPUs under `gpu_accelerator` (default `nvidia.com/gpu`), extended
 * resources, the template's tolerations, pod annotations `ray.io/compute-template` and
 * `ray.io/compute-image`, and the head's fixed ports; `overlay` is merged over the spec last.
 */
import { create } from '@bufbuild/protobuf';
import type { KubeObject } from '../../runtime/kube/types';
import { RAYCLUSTER, RAY_PORTS } from '../../spec/object-names';
import { JsonObject, asArray, asObject } from '../../spec/read';
import { ClusterSchema, type Cluster, type WorkerGroupSpec } from '../gen/rayshift/v1/cluster_pb';
import type { ComputeTemplate } from '../gen/rayshift/v1/compute_template_pb';
import { conditionsOf } from './conditions';
import { mergePatch } from './json-merge';
import { timestampOf } from './timestamps';

/** Pod annotation naming the template a group was made from. */
export const COMPUTE_TEMPLATE_ANNOTATION = 'ray.io/compute-template';
/** Pod annotation naming the image a group was made with. */
export const COMPUTE_IMAGE_ANNOTATION = 'ray.io/compute-image';

const HEAD_PORTS = [RAY_PORTS.gcs, RAY_PORTS.client, RAY_PORTS.dashboard, RAY_PORTS.metrics].map(({ name, port }) => ({ name, containerPort: port }));

function resources(t: ComputeTemplate): JsonObject {
  const amounts: JsonObject = { cpu: String(t.cpu), memory: `${t.memory}${t.memoryUnit || 'Gi'}` };
  if (t.gpu > 0) amounts[t.gpuAccelerator || 'nvidia.com/gpu'] = String(t.gpu);
  for (const [name, amount] of Object.entries(t.extendedResources)) amounts[name] = String(amount);
  return { requests: amounts, limits: { ...amounts } };
}

/** A toleration without its empty fields (`value` is empty for `Exists`). */
function tolerationJson(t: ComputeTemplate['tolerations'][number]): JsonObject {
  return Object.fromEntries(Object.entries({ key: t.key, operator: t.operator, value: t.value, effect: t.effect }).filter(([, v]) => v !== ''));
}

function podTemplate(container: string, image: string, template: ComputeTemplate, ports: readonly JsonObject[]): JsonObject {
  return {
    metadata: { annotations: { [COMPUTE_TEMPLATE_ANNOTATION]: template.name, [COMPUTE_IMAGE_ANNOTATION]: image } },
    spec: {
      containers: [{ name: container, image, resources: resources(template), ...(ports.length > 0 ? { ports } : {}) }],
      ...(template.tolerations.length > 0 ? { tolerations: template.tolerations.map(tolerationJson) } : {}),
    },
  };
}

/** The RayCluster of `cluster`, with `templates` holding every template its groups name. */
export function clusterToKube(cluster: Cluster, namespace: string, templates: ReadonlyMap<string, ComputeTemplate>): KubeObject {
  const spec = cluster.clusterSpec!;
  const defaultImage = `rayproject/ray:${cluster.version}`;
  const head = spec.headGroupSpec!;
  const worker = (g: WorkerGroupSpec) => ({
    groupName: g.groupName,
    replicas: g.replicas,
    minReplicas: g.minReplicas,
    maxReplicas: Math.max(g.maxReplicas, g.replicas),
    rayStartParams: { ...g.rayStartParams },
    template: podTemplate('ray-worker', g.image || defaultImage, templates.get(g.computeTemplate)!, []),
  });
  const rayClusterSpec: JsonObject = {
    rayVersion: cluster.version,
    enableInTreeAutoscaling: spec.enableInTreeAutoscaling,
    headGroupSpec: { rayStartParams: { ...head.rayStartParams }, template: podTemplate('ray-head', head.image || defaultImage, templates.get(head.computeTemplate)!, HEAD_PORTS) },
    workerGroupSpecs: spec.workerGroupSpec.map(worker),
  };
  return {
    apiVersion: RAYCLUSTER.apiVersion,
    kind: RAYCLUSTER.kind,
    metadata: {
      name: cluster.name,
      namespace,
      labels: { 'ray.io/user': cluster.user, 'ray.io/version': cluster.version, 'app.kubernetes.io/managed-by': 'rayshift-apiserver' },
      ...(Object.keys(cluster.annotations).length > 0 ? { annotations: { ...cluster.annotations } } : {}),
    },
    spec: cluster.overlay ? (mergePatch(rayClusterSpec, cluster.overlay) as JsonObject) : rayClusterSpec,
  };
}

function groupTemplate(group: unknown): { computeTemplate: string; image: string } {
  const template = asObject(asObject(group).template);
  const annotations = asObject(asObject(template.metadata).annotations);
  const container = asObject(asArray(asObject(template.spec).containers)[0]);
  return { computeTemplate: String(annotations[COMPUTE_TEMPLATE_ANNOTATION] ?? ''), image: String(container.image ?? '') };
}

function stringMap(v: unknown): Record<string, string> {
  return Object.fromEntries(Object.entries(asObject(v)).map(([k, x]) => [k, String(x)]));
}

/** The cluster message of a RayCluster (made here or elsewhere). */
export function clusterFromKube(obj: KubeObject): Cluster {
  const spec = asObject(obj.spec);
  const head = asObject(spec.headGroupSpec);
  const status = asObject(obj.status);
  const int = (v: unknown) => (typeof v === 'number' ? v : 0);
  return create(ClusterSchema, {
    name: obj.metadata.name ?? '',
    namespace: obj.metadata.namespace ?? '',
    user: obj.metadata.labels?.['ray.io/user'] ?? '',
    version: typeof spec.rayVersion === 'string' ? spec.rayVersion : '',
    clusterSpec: {
      enableInTreeAutoscaling: spec.enableInTreeAutoscaling === true,
      headGroupSpec: { ...groupTemplate(head), rayStartParams: stringMap(head.rayStartParams) },
      workerGroupSpec: asArray(spec.workerGroupSpecs).map((raw) => {
        const g = asObject(raw);
        return { groupName: String(g.groupName ?? ''), ...groupTemplate(g), replicas: int(g.replicas), minReplicas: int(g.minReplicas), maxReplicas: int(g.maxReplicas), rayStartParams: stringMap(g.rayStartParams) };
      }),
    },
    annotations: { ...(obj.metadata.annotations ?? {}) },
    etag: obj.metadata.resourceVersion ?? '',
    createTime: timestampOf(obj.metadata.creationTimestamp),
    clusterState: typeof status.state === 'string' ? status.state : '',
    conditions: conditionsOf(status),
  });
}
