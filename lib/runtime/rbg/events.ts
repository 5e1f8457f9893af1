/**
 * Records the executor's Events (`events.k8s.io/v1`) on a RoleBasedGroup, so `kubectl describe rbg`
 * and `kubectl events` show each round, completion, blocking role and deadline.
 */
import { randomBytes } from 'node:crypto';
import * as os from 'node:os';
import { KubeClient } from '../kube/client';
import { KnownTypes, KubeObject } from '../kube/types';
import { EVENT_CONTROLLER } from '../../spec/object-names';
import type { RolloutEvent } from '../../engine/rbg-coordination-types';

/** `2026-11-21T16:04:05.123000Z`: a MicroTime as the API server parses it (six fractional digits). */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** The Event object for `event` about `group` at `now`. */
export function buildEvent(group: KubeObject, event: RolloutEvent, now: number, instance = os.hostname()): KubeObject {
  return {
    apiVersion: KnownTypes.Event.apiVersion,
    kind: KnownTypes.Event.kind,
    // Named like client-go's recorder names them (`<object>.<hex time>`, plus a random suffix): the
    // API server validates a generateName ending in '.' as a full name and rejects it.
    metadata: { name: `${group.metadata.name}.${now.toString(16)}${randomBytes(3).toString('hex')}`, namespace: group.metadata.namespace },
    eventTime: microTime(now),
    reportingController: EVENT_CONTROLLER,
    reportingInstance: instance.slice(0, 128),
    action: 'CoordinatedRollout',
    reason: event.reason,
    note: event.message.slice(0, 1024),
    type: event.type,
    regarding: {
      apiVersion: group.apiVersion,
      kind: group.kind,
      name: group.metadata.name,
      namespace: group.metadata.namespace,
      uid: group.metadata.uid,
      resourceVersion: group.metadata.resourceVersion,
    },
  };
}

/** Creates one Event per entry; returns how many were created (a failed Event is logged by the caller, never fatal). */
export async function recordEvents(client: KubeClient, group: KubeObject, events: readonly RolloutEvent[], now: number, onError: (err: unknown) => void): Promise<number> {
  let created = 0;
  for (const e of events) {
    try {
      await client.create(buildEvent(group, e, now));
      created++;
    } catch (err) {
      onError(err);
    }
  }
  return created;
}
