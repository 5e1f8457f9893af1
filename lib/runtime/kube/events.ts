/**
 * Records the executors' Events (`events.k8s.io/v1`) on the object they act for, so `kubectl
 * describe` and `kubectl events` show them: a RoleBasedGroup's rounds, completion, blocking role and
 * deadline; a RayService's analysis verdicts.
 */
import { randomBytes } from 'node:crypto';
import * as os from 'node:os';
import type { KubeClient } from './client';
import { KnownTypes, KubeObject } from './types';
import type { RolloutEvent } from '../../engine/rbg-coordination-types';

/** `2026-11-21T16:04:05.123000Z`: a MicroTime as the API server parses it (six fractional digits). */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** Who records an Event and what it was doing. */
export interface EventSource {
  /** `reportingController`: the executor (`EVENT_CONTROLLER`, `RAYSERVICE_EVENT_CONTROLLER`). */
  readonly controller: string;
  /** `action`: `CoordinatedRollout`, `Analysis`. */
  readonly action: string;
}

/** The Event object for `event` about `group` at `now`, recorded by `source`. */
export function buildEvent(group: KubeObject, event: RolloutEvent, now: number, source: EventSource, instance = os.hostname()): KubeObject {
  return {
    apiVersion: KnownTypes.Event.apiVersion,
    kind: KnownTypes.Event.kind,
    // Named like client-go's recorder names them (`<object>.<hex time>`, plus a random suffix): the
    // API server validates a generateName ending in '.' as a full name and rejects it.
    metadata: { name: `${group.metadata.name}.${now.toString(16)}${randomBytes(3).toString('hex')}`, namespace: group.metadata.namespace },
    eventTime: microTime(now),
    reportingController: source.controller,
    reportingInstance: instance.slice(0, 128),
    action: event.action ?? source.action,
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
export async function recordEvents(client: Pick<KubeClient, 'create'>, group: KubeObject, events: readonly RolloutEvent[], now: number, source: EventSource, onError: (err: unknown) => void): Promise<number> {
  let created = 0;
  for (const e of events) {
    try {
      await client.create(buildEvent(group, e, now, source));
      created++;
    } catch (err) {
      onError(err);
    }
  }
  return created;
}
