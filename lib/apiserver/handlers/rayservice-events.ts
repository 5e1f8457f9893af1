/**
 * Kubernetes events of a RayService and of its active and pending RayClusters, read as the caller.
 * Each object's events are listed with field selectors on both `regarding.kind` and `regarding.name`
 * (KubeRay's apiserver filtered by name only, mixing in same-named objects of other kinds).
 */
import type { ServiceImpl } from '@connectrpc/connect';
import { create } from '@bufbuild/protobuf';
import { timestampMs } from '@bufbuild/protobuf/wkt';
import type { KubeClient } from '../../runtime/kube/client';
import { KnownTypes, type KubeObject } from '../../runtime/kube/types';
import { asObject } from '../../spec/read';
import { scopeOf } from '../auth/request-scope';
import { timestampOf } from '../convert/timestamps';
import { upgradeStatusOf } from '../convert/upgrade-status';
import { ListRayServiceEventsResponseSchema, type RayServiceEvent, type RayServiceService } from '../gen/rayshift/v1/rayservice_service_pb';
import { kubeCall, readRayService } from './kube-call';

type EventsImpl = Pick<ServiceImpl<typeof RayServiceService>, 'listRayServiceEvents'>;

function eventOf(e: KubeObject): Omit<RayServiceEvent, '$typeName'> {
  const regarding = asObject(e.regarding);
  const series = asObject(e.series);
  const last = series.lastObservedTime ?? e.eventTime ?? e.deprecatedLastTimestamp ?? e.metadata.creationTimestamp;
  return {
    regardingKind: String(regarding.kind ?? ''),
    regardingName: String(regarding.name ?? ''),
    type: String(e.type ?? ''),
    reason: String(e.reason ?? ''),
    note: String(e.note ?? ''),
    reportingController: String(e.reportingController ?? ''),
    count: typeof series.count === 'number' ? series.count : typeof e.deprecatedCount === 'number' && e.deprecatedCount > 0 ? e.deprecatedCount : 1,
    lastTime: timestampOf(last),
  };
}

async function eventsAbout(kube: KubeClient, namespace: string, kind: string, name: string): Promise<KubeObject[]> {
  return (await kube.listAll(KnownTypes.Event, { namespace, fieldSelector: `regarding.kind=${kind},regarding.name=${name}` })).items;
}

/** The events handler. */
export function rayServiceEvents(): EventsImpl {
  return {
    async listRayServiceEvents(req, ctx) {
      const { kube } = scopeOf(ctx);
      const svc = await readRayService(kube, req, req.executor);
      const u = upgradeStatusOf(svc);
      const clusters = [u.active?.cluster, u.pending?.cluster].filter((c): c is string => !!c);
      const lists = await kubeCall({ kind: 'Event', namespace: req.namespace }, () =>
        Promise.all([eventsAbout(kube, req.namespace, 'RayService', req.name), ...clusters.map((c) => eventsAbout(kube, req.namespace, 'RayCluster', c))]),
      );
      const events = lists.flat().map(eventOf);
      const at = (e: (typeof events)[number]) => (e.lastTime ? timestampMs(e.lastTime) : 0);
      events.sort((a, b) => at(a) - at(b));
      return create(ListRayServiceEventsResponseSchema, { events });
    },
  };
}
