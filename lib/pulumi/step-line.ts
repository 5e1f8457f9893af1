/** The one short line the Pulumi executor prints per step, and per Event (it shows in `pulumi up`'s output). */
import type { RayServiceAction } from '../engine/actions';
import type { RolloutEvent } from '../engine/rbg-coordination-types';
import type { RayServiceStatus } from '../engine/status';

/** `HH:MM:SS service action[+action]: weights A a / P p, capacity a% / p%` for a pass that carried out `actions`. */
export function stepLine(service: string, actions: readonly RayServiceAction[], status: RayServiceStatus, now: number): string {
  const time = new Date(now).toISOString().slice(11, 19);
  const pending = status.pendingClusterName ?? '-';
  return (
    `${time} ${service} ${actions.map((a) => a.type).join('+')}: ` +
    `weights ${status.activeClusterName ?? '-'} ${status.activeWeight} / ${pending} ${status.pendingWeight}, ` +
    `capacity ${status.activeTargetCapacity}% / ${status.pendingTargetCapacity}%`
  );
}

/** `HH:MM:SS service Reason: message` for an Event the pass recorded (an analysis verdict). */
export function eventLine(service: string, event: RolloutEvent, now: number): string {
  return `${new Date(now).toISOString().slice(11, 19)} ${service} ${event.reason}: ${event.message}`;
}
