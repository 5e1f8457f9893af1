/** Kubernetes conditions as API messages. */
import { create } from '@bufbuild/protobuf';
import { asArray, asObject } from '../../spec/read';
import { ConditionSchema, type Condition } from '../gen/rayshift/v1/common_pb';
import { timestampOf } from './timestamps';

/** The `conditions` array of a status as messages (malformed entries become empty fields). */
export function conditionsOf(status: unknown): Condition[] {
  return asArray(asObject(status).conditions).map((raw) => {
    const c = asObject(raw);
    return create(ConditionSchema, {
      type: String(c.type ?? ''),
      status: String(c.status ?? ''),
      reason: String(c.reason ?? ''),
      message: String(c.message ?? ''),
      lastTransitionTime: timestampOf(c.lastTransitionTime),
      observedGeneration: BigInt(typeof c.observedGeneration === 'number' ? c.observedGeneration : 0),
    });
  });
}
