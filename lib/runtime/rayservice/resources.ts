/** Builders of the objects the operator applies for a RayService (pure; no I/O). */
import { KubeObject, OwnerReference } from '../kube/types';
import { asArray, asObject, JsonObject } from '../../spec/read';
import { RayServiceSpec } from '../../spec/rayservice';
import type { CreatePendingClusterAction } from '../../engine/actions';
import { workersFromZero } from './worker-freeing';
import {
  CLUSTER_LABEL, GATEWAY, GATEWAY_HTTP_LISTENER, NODE_TYPE_LABEL, ORIGINATED_FROM_CRD, ORIGINATED_FROM_NAME, ORIGINATED_FROM_RAYSERVICE, NamedPort, RAYCLUSTER, RAY_PORTS, SERVE_LABEL, SERVICE,
  SPEC_HASH_ANNOTATION, WORKER_FLOORS_ANNOTATION, headService, perClusterServeService, serveLabelValue, servePortOf, serviceGatewayName, stableServeService,
} from '../../spec/object-names';

/** A controller owner reference to `owner`. */
export function controllerRef(owner: KubeObject): OwnerReference {
  return { apiVersion: owner.apiVersion, kind: owner.kind, name: String(owner.metadata.name), uid: String(owner.metadata.uid), controller: true, blockOwnerDeletion: true };
}

/** The number of the head container's port named `port.name`, else its default (KubeRay's `GetServePort` rule). */
export function headPort(spec: RayServiceSpec, port: NamedPort): number {
  const { name, port: fallback } = port;
  const containers = asArray(asObject(asObject(spec.rayClusterConfig.headGroupSpec.template).spec).containers);
  for (const c of containers) {
    for (const p of asArray(asObject(c).ports)) {
      const port = asObject(p);
      if (port.name === name && typeof port.containerPort === 'number') return port.containerPort;
    }
  }
  return fallback;
}

/** The number of the serve port routes point at (`servePortOf` the spec's route kind). */
export function servePort(spec: RayServiceSpec): number {
  return headPort(spec, servePortOf(spec.rayshift?.routeKind));
}

/**
 * The RayCluster `name` of a RayService, with KubeRay's labels, the spec-hash annotation and the
 * controller reference `owner`. `startFromMinReplicas` drops worker `replicas` so the
 * autoscaler follows `target_capacity` (a pending cluster of an incremental upgrade);
 * `workerFloorZero` starts the workers at 0 with the spec's floors recorded (shrinkFirst).
 */
export function buildRayCluster(service: KubeObject, owner: OwnerReference, spec: RayServiceSpec, create: Pick<CreatePendingClusterAction, 'name' | 'specHash' | 'startFromMinReplicas' | 'workerFloorZero'>): KubeObject {
  const { name, specHash, startFromMinReplicas } = create;
  const cluster = structuredClone(spec.rayClusterConfig) as JsonObject;
  let floors: string | undefined;
  if (create.workerFloorZero === true) {
    const zero = workersFromZero(cluster.workerGroupSpecs);
    cluster.workerGroupSpecs = zero.groups;
    floors = JSON.stringify(zero.floors);
  } else if (startFromMinReplicas) {
    cluster.workerGroupSpecs = asArray(cluster.workerGroupSpecs).map((g) => {
      const { replicas: _replicas, ...rest } = asObject(g);
      return rest;
    });
  }
  return {
    apiVersion: RAYCLUSTER.apiVersion,
    kind: RAYCLUSTER.kind,
    metadata: {
      name,
      namespace: service.metadata.namespace,
      labels: { ...(service.metadata.labels ?? {}), [ORIGINATED_FROM_NAME]: String(service.metadata.name), [ORIGINATED_FROM_CRD]: ORIGINATED_FROM_RAYSERVICE },
      annotations: { [SPEC_HASH_ANNOTATION]: specHash, ...(floors !== undefined ? { [WORKER_FLOORS_ANNOTATION]: floors } : {}) },
      ownerReferences: [owner],
    },
    spec: cluster,
  };
}

/** `<cluster>-serve-svc` on the spec's serve port: selects the cluster's serving pods; owned by the cluster (KubeRay's shape). */
export function buildPerClusterServeService(cluster: KubeObject, spec: RayServiceSpec): KubeObject {
  const name = String(cluster.metadata.name);
  const portName = servePortOf(spec.rayshift?.routeKind).name;
  const port = servePort(spec);
  return {
    apiVersion: SERVICE.apiVersion,
    kind: SERVICE.kind,
    metadata: {
      name: perClusterServeService(name),
      namespace: cluster.metadata.namespace,
      labels: { [ORIGINATED_FROM_NAME]: name, [ORIGINATED_FROM_CRD]: ORIGINATED_FROM_RAYSERVICE, [SERVE_LABEL]: serveLabelValue(name) },
      ownerReferences: [controllerRef(cluster)],
    },
    spec: { selector: { [CLUSTER_LABEL]: name, [SERVE_LABEL]: 'true' }, ports: [{ name: portName, port, targetPort: port, protocol: 'TCP' }] },
  };
}

/** `<service>-head-svc` and `<service>-serve-svc` pointed at `cluster`, owned by `owner` (blue/green, None and first creation). */
export function buildStableServices(service: KubeObject, owner: OwnerReference, spec: RayServiceSpec, cluster: string): KubeObject[] {
  const name = String(service.metadata.name);
  const labels = { [ORIGINATED_FROM_NAME]: name, [ORIGINATED_FROM_CRD]: ORIGINATED_FROM_RAYSERVICE };
  const serve = headPort(spec, RAY_PORTS.serve);
  return [
    {
      apiVersion: SERVICE.apiVersion,
      kind: SERVICE.kind,
      metadata: { name: headService(name), namespace: service.metadata.namespace, labels: { ...labels, [NODE_TYPE_LABEL]: 'head' }, ownerReferences: [owner] },
      spec: {
        selector: { [CLUSTER_LABEL]: cluster, [NODE_TYPE_LABEL]: 'head' },
        ports: [{ name: RAY_PORTS.dashboard.name, port: headPort(spec, RAY_PORTS.dashboard) }, { name: RAY_PORTS.serve.name, port: serve }],
      },
    },
    {
      apiVersion: SERVICE.apiVersion,
      kind: SERVICE.kind,
      metadata: { name: stableServeService(name), namespace: service.metadata.namespace, labels: { ...labels, [SERVE_LABEL]: serveLabelValue(name) }, ownerReferences: [owner] },
      spec: { selector: { [CLUSTER_LABEL]: cluster, [SERVE_LABEL]: 'true' }, ports: [{ name: RAY_PORTS.serve.name, port: serve }] },
    },
  ];
}

/** `<service>-gateway` of class `className`, owned by `owner`, with KubeRay's single HTTP listener (`GATEWAY_HTTP_LISTENER`). */
export function buildGateway(service: KubeObject, owner: OwnerReference, className: string): KubeObject {
  return {
    apiVersion: GATEWAY.apiVersion,
    kind: GATEWAY.kind,
    metadata: { name: serviceGatewayName(String(service.metadata.name)), namespace: service.metadata.namespace, ownerReferences: [owner] },
    spec: { gatewayClassName: className, listeners: [{ ...GATEWAY_HTTP_LISTENER }] },
  };
}
