/** Whether a Pod serves: what a workload controller counts as a ready replica. */
import type { KubeObject } from './types';
import { asArray, asObject, type JsonObject } from '../../spec/read';

/** A Pod ready as its controller counts one: phase Running and its Ready condition True. */
export function podReady(pod: KubeObject): boolean {
  const status = asObject((pod as unknown as JsonObject).status);
  return status.phase === 'Running' && asArray(status.conditions).some((c) => asObject(c).type === 'Ready' && asObject(c).status === 'True');
}
