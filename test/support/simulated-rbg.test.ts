/**
 * The simulated RBG controller's own arithmetic (simulated-rbg.ts), on Kubernetes' intstr examples:
 * it must stand on its own, as the executor it checks is not allowed to be its oracle.
 */
import { scaledIntOrPercent, simulatedMaxUnavailable, simulatedPartition, simulatedRoleRevision } from './simulated-rbg';

test('intstr scaling: integers as they are, percents of the total rounded up or down', () => {
  expect([scaledIntOrPercent(3, 10, true), scaledIntOrPercent('25%', 10, true), scaledIntOrPercent('25%', 10, false), scaledIntOrPercent('100%', 7, false)]).toEqual([3, 3, 2, 7]);
});

test('a partition is rounded up and kept within the replicas; maxUnavailable defaults to 1, rounds down and never reaches 0', () => {
  expect([simulatedPartition(undefined, 4), simulatedPartition('90%', 10), simulatedPartition('95%', 10), simulatedPartition(12, 10)]).toEqual([0, 9, 10, 10]);
  expect([simulatedMaxUnavailable(undefined, 40), simulatedMaxUnavailable('10%', 40), simulatedMaxUnavailable('10%', 5), simulatedMaxUnavailable(3, 5)]).toEqual([1, 4, 1, 3]);
});

test('the template revision ignores replicas, the rollout strategy and key order, and changes with the template', () => {
  const role = { name: 'prefill', replicas: 4, rolloutStrategy: { rollingUpdate: { partition: 2 } }, template: { spec: { containers: [{ name: 'e', image: 'v1' }] } } };
  const reordered = { template: { spec: { containers: [{ image: 'v1', name: 'e' }] } }, replicas: 8, name: 'prefill' };
  expect(simulatedRoleRevision(reordered)).toBe(simulatedRoleRevision(role));
  expect(simulatedRoleRevision({ ...role, template: { spec: { containers: [{ name: 'e', image: 'v2' }] } } })).not.toBe(simulatedRoleRevision(role));
});
