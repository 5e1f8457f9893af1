/**
 * RayService messages to and from Kubernetes objects. The typed spec covers what rayshift reasons
 * about; `spec.overlay` carries every other spec field both ways, so a Get → Update round trip keeps
 * fields this API does not model and no CRD field is out of reach.
 */
import { create, type JsonObject as ProtoJsonObject } from '@bufbuild/protobuf';
import type { KubeObject } from '../../runtime/kube/types';
import { JsonObject, asObject, isObject } from '../../spec/read';
import type { CapacityPolicy as SpecCapacityPolicy } from '../../spec/capacity-policy';
import {
  CapacityPolicy,
  RayServiceSchema,
  RayServiceSpecSchema,
  RouteKind,
  UpgradeStrategyType,
  type RayService,
  type RayServiceSpec,
} from '../gen/rayshift/v1/rayservice_pb';
import type { UpgradeStatus } from '../gen/rayshift/v1/upgrade_pb';
import { ANALYSIS_SHAPE, analysisFromKube, analysisToKube } from './analysis-options';
import { executorOf, rayServiceType } from './executor';
import { TypedShape, mergePatch, residue } from './json-merge';
import { timestampOf } from './timestamps';

const STRATEGY_NAMES: ReadonlyMap<UpgradeStrategyType, string> = new Map([
  [UpgradeStrategyType.NEW_CLUSTER, 'NewCluster'],
  [UpgradeStrategyType.NEW_CLUSTER_WITH_INCREMENTAL_UPGRADE, 'NewClusterWithIncrementalUpgrade'],
  [UpgradeStrategyType.NONE, 'None'],
]);
const ROUTE_KIND_NAMES: ReadonlyMap<RouteKind, string> = new Map([
  [RouteKind.HTTP, 'HTTP'],
  [RouteKind.GRPC, 'GRPC'],
]);
const CAPACITY_POLICY_NAMES: ReadonlyMap<CapacityPolicy, SpecCapacityPolicy> = new Map([
  [CapacityPolicy.WAIT, 'wait'],
  [CapacityPolicy.FAIL, 'fail'],
  [CapacityPolicy.SHRINK_FIRST, 'shrinkFirst'],
]);

/** The spec fields the typed message carries (the rest travels in `overlay`). */
export const TYPED_SPEC: TypedShape = {
  serveConfigV2: true,
  rayClusterConfig: true,
  rayClusterDeletionDelaySeconds: true,
  upgradeStrategy: { type: true, clusterUpgradeOptions: { maxSurgePercent: true, stepSizePercent: true, intervalSeconds: true, gatewayClassName: true } },
  rayshift: { gatewayRef: { name: true, namespace: true, sectionName: true }, progressDeadlineSeconds: true, paused: true, routeKind: true, analysis: ANALYSIS_SHAPE, capacityPolicy: true },
};

function keyOf<K, V>(map: ReadonlyMap<K, V>, value: unknown): K | undefined {
  for (const [k, v] of map) if (v === value) return k;
  return undefined;
}

/** The CRD `spec` of a typed spec: typed fields first, then `overlay` merged over them. */
export function specToKube(spec: RayServiceSpec | undefined): JsonObject {
  if (!spec) return {};
  const out: JsonObject = {};
  if (spec.serveConfigV2) out.serveConfigV2 = spec.serveConfigV2;
  if (spec.rayClusterConfig) out.rayClusterConfig = spec.rayClusterConfig;
  if (spec.rayClusterDeletionDelaySeconds !== undefined) out.rayClusterDeletionDelaySeconds = spec.rayClusterDeletionDelaySeconds;
  const strategy = spec.upgradeStrategy;
  if (strategy) {
    const s: JsonObject = {};
    const type = STRATEGY_NAMES.get(strategy.type);
    if (type) s.type = type;
    const o = strategy.clusterUpgradeOptions;
    if (o) {
      s.clusterUpgradeOptions = {
        ...(o.maxSurgePercent !== undefined ? { maxSurgePercent: o.maxSurgePercent } : {}),
        ...(o.stepSizePercent !== undefined ? { stepSizePercent: o.stepSizePercent } : {}),
        ...(o.intervalSeconds !== undefined ? { intervalSeconds: o.intervalSeconds } : {}),
        ...(o.gatewayClassName ? { gatewayClassName: o.gatewayClassName } : {}),
      };
    }
    out.upgradeStrategy = s;
  }
  const ext = spec.rayshift;
  if (ext) {
    const e: JsonObject = {};
    if (ext.gatewayRef) {
      const r = ext.gatewayRef;
      e.gatewayRef = { name: r.name, ...(r.namespace ? { namespace: r.namespace } : {}), ...(r.sectionName ? { sectionName: r.sectionName } : {}) };
    }
    if (ext.progressDeadlineSeconds !== undefined) e.progressDeadlineSeconds = ext.progressDeadlineSeconds;
    if (ext.paused !== undefined) e.paused = ext.paused;
    const routeKind = ROUTE_KIND_NAMES.get(ext.routeKind);
    if (routeKind) e.routeKind = routeKind;
    if (ext.analysis) e.analysis = analysisToKube(ext.analysis);
    const capacityPolicy = CAPACITY_POLICY_NAMES.get(ext.capacityPolicy);
    if (capacityPolicy) e.capacityPolicy = capacityPolicy;
    out.rayshift = e;
  }
  return spec.overlay ? (mergePatch(out, spec.overlay) as JsonObject) : out;
}

/** The typed spec of a CRD `spec`, with every untyped field in `overlay`. */
export function specFromKube(raw: unknown): RayServiceSpec {
  const spec = asObject(raw);
  const strategy = asObject(spec.upgradeStrategy);
  const options = asObject(strategy.clusterUpgradeOptions);
  const ext = asObject(spec.rayshift);
  const ref = asObject(ext.gatewayRef);
  const int = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) ? v : undefined);
  return create(RayServiceSpecSchema, {
    serveConfigV2: typeof spec.serveConfigV2 === 'string' ? spec.serveConfigV2 : '',
    rayClusterConfig: isObject(spec.rayClusterConfig) ? (spec.rayClusterConfig as ProtoJsonObject) : undefined,
    rayClusterDeletionDelaySeconds: int(spec.rayClusterDeletionDelaySeconds),
    upgradeStrategy: spec.upgradeStrategy === undefined
      ? undefined
      : {
          type: keyOf(STRATEGY_NAMES, strategy.type) ?? UpgradeStrategyType.UNSPECIFIED,
          clusterUpgradeOptions: strategy.clusterUpgradeOptions === undefined
            ? undefined
            : {
                maxSurgePercent: int(options.maxSurgePercent),
                stepSizePercent: int(options.stepSizePercent),
                intervalSeconds: int(options.intervalSeconds),
                gatewayClassName: typeof options.gatewayClassName === 'string' ? options.gatewayClassName : '',
              },
        },
    rayshift: spec.rayshift === undefined
      ? undefined
      : {
          gatewayRef: ext.gatewayRef === undefined ? undefined : { name: String(ref.name ?? ''), namespace: String(ref.namespace ?? ''), sectionName: String(ref.sectionName ?? '') },
          progressDeadlineSeconds: int(ext.progressDeadlineSeconds),
          paused: typeof ext.paused === 'boolean' ? ext.paused : undefined,
          routeKind: keyOf(ROUTE_KIND_NAMES, ext.routeKind) ?? RouteKind.UNSPECIFIED,
          analysis: ext.analysis === undefined ? undefined : analysisFromKube(ext.analysis),
          capacityPolicy: keyOf(CAPACITY_POLICY_NAMES, ext.capacityPolicy) ?? CapacityPolicy.UNSPECIFIED,
        },
    overlay: residue(spec, TYPED_SPEC) as ProtoJsonObject | undefined,
  });
}

/** The Kubernetes object of a RayService message (`namespace` from the request path). */
export function rayServiceToKube(msg: RayService, namespace: string): KubeObject {
  const type = rayServiceType(msg.executor);
  return {
    apiVersion: type.apiVersion,
    kind: type.kind,
    metadata: {
      name: msg.name,
      namespace,
      ...(Object.keys(msg.labels).length > 0 ? { labels: { ...msg.labels } } : {}),
      ...(Object.keys(msg.annotations).length > 0 ? { annotations: { ...msg.annotations } } : {}),
      ...(msg.etag ? { resourceVersion: msg.etag } : {}),
    },
    spec: specToKube(msg.spec),
  };
}

/** The RayService message of a Kubernetes object, with its upgrade status. */
export function rayServiceFromKube(obj: KubeObject, upgrade: UpgradeStatus): RayService {
  const m = obj.metadata;
  return create(RayServiceSchema, {
    name: m.name ?? '',
    namespace: m.namespace ?? '',
    executor: executorOf(obj.apiVersion),
    spec: specFromKube(obj.spec),
    labels: { ...(m.labels ?? {}) },
    annotations: { ...(m.annotations ?? {}) },
    etag: m.resourceVersion ?? '',
    generation: BigInt(m.generation ?? 0),
    uid: m.uid ?? '',
    createTime: timestampOf(m.creationTimestamp),
    upgrade,
  });
}
