/**
 * The coordination rule most RBG unit tests run: rule `pd` over prefill 4 and decode 2, partition
 * 0 and maxUnavailable 1 each, no rollback on the deadline. Test support.
 */
import type { ExecutorRule } from '../../lib/engine/rbg-coordination-types';

/** Rule `pd` over prefill 4 / decode 2 with `overrides` (maxSkew, deadline, router, …). */
export function prefillDecodeRule(overrides: Partial<ExecutorRule> & Pick<ExecutorRule, 'maxSkewPercent' | 'progressDeadlineSeconds'>): ExecutorRule {
  return {
    name: 'pd',
    roles: [
      { name: 'prefill', replicas: 4, partition: 0, maxUnavailable: 1 },
      { name: 'decode', replicas: 2, partition: 0, maxUnavailable: 1 },
    ],
    rollbackOnDeadline: false,
    capacityPolicy: 'wait',
    surgeUnschedulableSeconds: 120,
    ...overrides,
  };
}
