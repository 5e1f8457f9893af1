/** Builders of the objects the operator applies for a RayService (pure; no I/O). */
import { KubeObject, OwnerReference } from '../kube/types';
import { asArray, asObject, JsonObject } from '../../spec/read';
import { RayServiceSpec } from '../../spec/rayservice';
import { CLUSTER_LABEL, ORIGINATED_FROM_CRD, ORIGINATED_FROM_NAME, SPEC_HASH_ANNOTATION, headService, perClusterServeService, serviceGatewayName, stableServeService } from './names';

/** A controller owner reference to `owner`. */
export function controllerRef(owner: KubeObject): OwnerReference {
  return { apiVersion: owner.apiVersion, kind: owner.kind, name: String(owner.metadata.name), uid: String(owner.metadata.uid), controller: true, blockOwnerDeletion: true };
}

/** The head container's port named `name`, else `fallback` (KubeRay's `GetServePort` rule). */
export function headPort(spec: RayServiceSpec, name: string, fallback: number): number {
  const containers = asArray(asObject(asObject(spec.rayClusterConfig.headGroupSpec.template).spec).containers);
  for (const c of containers) {
    for (const p of asArray(asObject(c).ports)) {
      const port = asObject(p);
      if (port.name === name && typeof port.containerPort === 'number') return port.containerPort;
    }
  }
  return fallback;
}

/** The serve port routes point at: `serve` (8000) for HTTP, `serve-grpc` (9000) for gRPC. */
export function servePort(spec: RayServiceSpec): number {
  return spec.rayshift?.routeKind === 'GRPC' ? headPort(spec, 'serve-grpc', 9000) : headPort(spec, 'serve', 8000);
}

/**
 * The RayCluster `name` of a RayService, with KubeRay's labels, the spec-hash annotation and the
 * controller reference `owner`. `startFromMinReplicas` drops worker `replicas` so the
 * autoscaler follows `target_capacity` (a pending cluster of an incremental upgrade).
 */
export function buildRayCluster(service: KubeObject, owner: OwnerReference, spec: RayServiceSpec, name: string, specHash: string, startFromMinReplicas: boolean): KubeObject {
  const cluster = structuredClone(spec.rayClusterConfig) as JsonObject;
  if (startFromMinReplicas) {
    cluster.workerGroupSpecs = asArray(cluster.workerGroupSpecs).map((g) => {
      const { replicas: _replicas, ...rest } = asObject(g);
      return rest;
    });
  }
  return {
    apiVersion: 'ray.io/v1',
    kind: 'RayCluster',
    metadata: {
      name,
      namespace: service.metadata.namespace,
      labels: { ...(service.metadata.labels ?? {}), [ORIGINATED_FROM_NAME]: String(service.metadata.name), [ORIGINATED_FROM_CRD]: 'RayService' },
      annotations: { [SPEC_HASH_ANNOTATION]: specHash },
      ownerReferences: [owner],
    },
    spec: cluster,
  };
}

/** `<cluster>-serve-svc`: selects the cluster's serving pods; owned by the cluster (KubeRay's shape). */
export function buildPerClusterServeService(cluster: KubeObject, port: number, portName: string): KubeObject {
  const name = String(cluster.metadata.name);
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: perClusterServeService(name),
      namespace: cluster.metadata.namespace,
      labels: { [ORIGINATED_FROM_NAME]: name, [ORIGINATED_FROM_CRD]: 'RayService', 'ray.io/serve': `${name}-serve` },
      ownerReferences: [controllerRef(cluster)],
    },
    spec: { selector: { [CLUSTER_LABEL]: name, 'ray.io/serve': 'true' }, ports: [{ name: portName, port, targetPort: port, protocol: 'TCP' }] },
  };
}

/** `<service>-head-svc` and `<service>-serve-svc` pointed at `cluster`, owned by `owner` (blue/green, None and first creation). */
export function buildStableServices(service: KubeObject, owner: OwnerReference, spec: RayServiceSpec, cluster: string): KubeObject[] {
  const name = String(service.metadata.name);
  const labels = { [ORIGINATED_FROM_NAME]: name, [ORIGINATED_FROM_CRD]: 'RayService' };
  const serve = headPort(spec, 'serve', 8000);
  return [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: headService(name), namespace: service.metadata.namespace, labels: { ...labels, 'ray.io/node-type': 'head' }, ownerReferences: [owner] },
      spec: {
        selector: { [CLUSTER_LABEL]: cluster, 'ray.io/node-type': 'head' },
        ports: [{ name: 'dashboard', port: headPort(spec, 'dashboard', 8265) }, { name: 'serve', port: serve }],
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: stableServeService(name), namespace: service.metadata.namespace, labels: { ...labels, 'ray.io/serve': `${name}-serve` }, ownerReferences: [owner] },
      spec: { selector: { [CLUSTER_LABEL]: cluster, 'ray.io/serve': 'true' }, ports: [{ name: 'serve', port: serve }] },
    },
  ];
}

/** `<service>-gateway` of class `className`, owned by `owner`, with KubeRay's single HTTP listener on port 80. */
export function buildGateway(service: KubeObject, owner: OwnerReference, className: string): KubeObject {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name: serviceGatewayName(String(service.metadata.name)), namespace: service.metadata.namespace, ownerReferences: [owner] },
    spec: { gatewayClassName: className, listeners: [{ name: 'http', protocol: 'HTTP', port: 80 }] },
  };
}
