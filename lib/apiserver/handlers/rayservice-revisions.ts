/**
 * The spec history of a `rayshift.dev` RayService, derived rather than stored: every RayCluster the
 * operator creates for a service carries the hash of the RayCluster spec it was made from and the
 * Serve config last applied to it, and is controlled by the service, so the clusters Kubernetes still
 * holds (active, pending, and retired ones until `rayClusterDeletionDelaySeconds` has passed) are the
 * revisions, plus the current spec while no cluster runs it. The serving cluster's spec and Serve
 * config come from the operator's record in the service's status when it has one (the rollback
 * source; a RayCluster's own data can be changed by anyone who may edit RayClusters). Read as the
 * caller: the service (`get`) and its clusters (`list` RayClusters).
 */
import { create, type JsonObject as ProtoJsonObject } from '@bufbuild/protobuf';
import { timestampMs } from '@bufbuild/protobuf/wkt';
import type { ServiceImpl } from '@connectrpc/connect';
import { clusterSpecHash, type JsonValue } from '../../engine/cluster-hash';
import type { KubeObject } from '../../runtime/kube/types';
import {
  ORIGINATED_FROM_CRD, ORIGINATED_FROM_NAME, ORIGINATED_FROM_RAYSERVICE, RAYCLUSTER, RAYSHIFT_RAYSERVICE, SERVE_CONFIG_ANNOTATION, SPEC_HASH_ANNOTATION,
} from '../../spec/object-names';
import { serviceView } from '../../runtime/rayservice/progress';
import { asObject, isObject } from '../../spec/read';
import { scopeOf } from '../auth/request-scope';
import { timestampOf } from '../convert/timestamps';
import { ListRayServiceRevisionsResponseSchema, RayServiceRevisionSchema, RevisionState, type RayServiceRevision, type RayServiceService } from '../gen/rayshift/v1/rayservice_service_pb';
import { kubeCall, rayServiceSubject } from './kube-call';
import { recordedRevertingSpec, revertingClusterConfig } from './rollback-spec';

type RevisionsImpl = Pick<ServiceImpl<typeof RayServiceService>, 'listRayServiceRevisions'>;

/** Newest first by creation time (a revision without a cluster first), then by stage of life, then by name. */
function newestFirst(a: RayServiceRevision, b: RayServiceRevision): number {
  const at = (r: RayServiceRevision) => (r.createTime ? timestampMs(r.createTime) : Number.POSITIVE_INFINITY);
  if (at(a) !== at(b)) return at(a) < at(b) ? 1 : -1;
  // Creation times have whole seconds: within one, the later stage of a revision's life goes first.
  if (a.state !== b.state) return LIFE_ORDER.indexOf(a.state) - LIFE_ORDER.indexOf(b.state);
  return a.cluster.localeCompare(b.cluster);
}

/** Revision states from the newest stage of a revision's life to the oldest. */
const LIFE_ORDER: readonly RevisionState[] = [RevisionState.NOT_RUNNING, RevisionState.PENDING, RevisionState.ACTIVE, RevisionState.RETIRED, RevisionState.UNSPECIFIED];

/**
 * The revisions of `svc` given the RayClusters of its namespace that name it as their origin: one per
 * cluster the service controls (by owner UID, so a deleted and re-created service of the same name,
 * or a KubeRay RayService, does not mix in), plus the current spec when no cluster carries its hash.
 */
export function revisionsOf(svc: KubeObject, clusters: readonly KubeObject[]): RayServiceRevision[] {
  const spec = asObject(svc.spec);
  const goalHash = isObject(spec.rayClusterConfig) ? clusterSpecHash(spec.rayClusterConfig as JsonValue) : '';
  const engine = serviceView(svc).engine;
  const stateOf = (name: string | undefined) =>
    name === engine?.activeClusterName ? RevisionState.ACTIVE : name === engine?.pendingClusterName ? RevisionState.PENDING : RevisionState.RETIRED;
  const owned = clusters.filter((c) => c.metadata.ownerReferences?.some((r) => r.controller === true && r.uid === svc.metadata.uid));
  const revisions = owned.map((c) => {
    const state = stateOf(c.metadata.name);
    const recorded = state === RevisionState.ACTIVE ? recordedRevertingSpec(svc, c.metadata.name ?? '') : undefined;
    const specHash = recorded ? clusterSpecHash(recorded.rayClusterConfig as JsonValue) : (c.metadata.annotations?.[SPEC_HASH_ANNOTATION] ?? '');
    return create(RayServiceRevisionSchema, {
      specHash,
      cluster: c.metadata.name ?? '',
      state,
      current: specHash !== '' && specHash === goalHash,
      createTime: timestampOf(c.metadata.creationTimestamp),
      serveConfigV2: recorded ? (recorded.serveConfigV2 ?? '') : (c.metadata.annotations?.[SERVE_CONFIG_ANNOTATION] ?? ''),
      rayClusterConfig: (recorded?.rayClusterConfig ?? revertingClusterConfig(c, spec.rayClusterConfig)) as ProtoJsonObject | undefined,
    });
  });
  if (goalHash !== '' && !revisions.some((r) => r.current)) {
    revisions.push(
      create(RayServiceRevisionSchema, {
        specHash: goalHash,
        state: RevisionState.NOT_RUNNING,
        current: true,
        serveConfigV2: typeof spec.serveConfigV2 === 'string' ? spec.serveConfigV2 : '',
        rayClusterConfig: spec.rayClusterConfig as ProtoJsonObject,
      }),
    );
  }
  return revisions.sort(newestFirst);
}

/** The revisions handler. */
export function rayServiceRevisions(): RevisionsImpl {
  return {
    async listRayServiceRevisions(req, ctx) {
      const { kube } = scopeOf(ctx);
      const svc = await kubeCall(rayServiceSubject(req), () => kube.get(RAYSHIFT_RAYSERVICE, req.name, req.namespace));
      const labelSelector = { [ORIGINATED_FROM_NAME]: req.name, [ORIGINATED_FROM_CRD]: ORIGINATED_FROM_RAYSERVICE };
      const clusters = await kubeCall({ kind: 'RayCluster', namespace: req.namespace }, () => kube.listAll(RAYCLUSTER, { namespace: req.namespace, labelSelector }));
      return create(ListRayServiceRevisionsResponseSchema, { revisions: revisionsOf(svc, clusters.items) });
    },
  };
}
