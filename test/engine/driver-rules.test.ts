/** The decisions of a driver that runs a RayService to its goal (lib/engine/driver-rules.ts): change classification and the deadline's choice. */
import { classifySpecChange, deadlineChoice } from '../../lib/engine/driver-rules';
import { RayServiceSpec } from '../../lib/spec/rayservice';

const spec = (cpu: string, extra: Partial<RayServiceSpec> = {}): RayServiceSpec =>
  ({ rayClusterConfig: { headGroupSpec: { template: { spec: { containers: [{ name: 'ray-head', image: 'ray', resources: { limits: { cpu } } }] } } } }, serveConfigV2: 'a', ...extra }) as unknown as RayServiceSpec;

test('a cluster spec change is an upgrade by the spec strategy, KubeRay\'s NewCluster when unset', () => {
  expect(classifySpecChange(spec('1'), spec('2'))).toEqual({ kind: 'upgrade', strategy: 'NewCluster' });
  const incremental = { upgradeStrategy: { type: 'NewClusterWithIncrementalUpgrade' as const } };
  expect(classifySpecChange(spec('1'), spec('2', incremental))).toEqual({ kind: 'upgrade', strategy: 'NewClusterWithIncrementalUpgrade' });
});

test('a Serve config change alone is applied in place; other changes are settings; no change is none', () => {
  expect(classifySpecChange(spec('1'), spec('1', { serveConfigV2: 'b' }))).toEqual({ kind: 'inPlace' });
  expect(classifySpecChange(spec('1'), spec('1', { excludeHeadPodFromServeSvc: true }))).toEqual({ kind: 'settings' });
  expect(classifySpecChange(spec('1'), spec('1'))).toEqual({ kind: 'none' });
});

test('at the deadline an upgrade in flight rolls back when asked to; anything else pauses', () => {
  const inFlight = { activeClusterName: 'a', pendingClusterName: 'b' };
  expect(deadlineChoice('rollback', inFlight)).toBe('rollback');
  expect(deadlineChoice('pause', inFlight)).toBe('pause');
  expect(deadlineChoice('rollback', { activeClusterName: 'a' })).toBe('pause');
  expect(deadlineChoice('rollback', { pendingClusterName: 'b' })).toBe('pause');
});
