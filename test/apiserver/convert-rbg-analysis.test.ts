/**
 * The analysis of a RoleBasedGroup's coordinated rollout in the API (lib/apiserver/convert/rolebasedgroup.ts):
 * each rule rayshift's executor runs (the `rayshift.dev/coordination` annotation) is a coordination
 * of the group's status, carrying its entry of the status annotation's analysis as the same typed
 * `UpgradeAnalysis` as a RayService's, over REST JSON and gRPC binary alike.
 */
import { fromBinary, toBinary, toJson } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { Testing } from 'cdk8s';
import { roleBasedGroupFromKube } from '../../lib/apiserver/convert/rolebasedgroup';
import { RoleBasedGroupSchema } from '../../lib/apiserver/gen/rayshift/v1/rolebasedgroup_pb';
import { RoleBasedGroup } from '../../lib/cdk8s/rolebasedgroup';
import type { CoordinationAnalysisStatus, CoordinationStatus } from '../../lib/engine/rbg-coordination-status';
import type { KubeObject } from '../../lib/runtime/kube/types';
import { STATUS_ANNOTATION } from '../../lib/spec/object-names';

const T0 = Date.parse('2026-11-24T12:00:00.000Z');

const ANALYSIS: CoordinationAnalysisStatus = {
  newReplicas: 3,
  effectiveAt: T0,
  step: {
    id: `step/abc/25/${T0}`,
    kind: 'step',
    cluster: 'abc',
    pendingWeight: 25,
    startedAt: T0,
    phase: 'Running',
    metrics: [{ name: 'error-ratio', phase: 'Running', taken: 1, successes: 1, failures: 0, inconclusives: 0, consecutiveSuccesses: 1, last: { at: T0 + 30_000, result: 'Successful', value: 0.01, message: '0.01' } }],
  },
  verdicts: [{ id: `background/abc/0/${T0 - 60_000}`, kind: 'background', pendingWeight: 0, phase: 'Failed', at: T0 - 1_000, dryRun: true, message: 'error-ratio failed' }],
};

/** The group the construct synthesizes for the operator, with the executor's status annotation. */
function executed(analysis: CoordinationAnalysisStatus | undefined): KubeObject {
  const chart = Testing.chart();
  new RoleBasedGroup(chart, 'pd', {
    metadata: { name: 'pd', namespace: 'llm' },
    executor: 'operator',
    roles: [
      { name: 'prefill', replicas: 8, template: { spec: { containers: [{ name: 'prefill', image: 'sglang:2' }] } } },
      { name: 'decode', replicas: 4, template: { spec: { containers: [{ name: 'decode', image: 'sglang:2' }] } } },
    ],
    coordination: [{ name: 'pd', roles: ['prefill', 'decode'], rollingUpdate: { maxSkew: '25%', maxUnavailable: 1 } }],
  });
  const group = Testing.synth(chart).find((o) => o.kind === 'RoleBasedGroup') as KubeObject;
  const status = { name: 'pd', phase: 'Progressing', roles: [], ...(analysis ? { analysis } : {}) } as unknown as CoordinationStatus;
  group.metadata.annotations = { ...group.metadata.annotations, [STATUS_ANNOTATION]: JSON.stringify({ observedGeneration: 1, coordinations: [status] }) };
  group.status = { roleStatuses: [{ name: 'prefill', replicas: 8, readyReplicas: 8, updatedReplicas: 2 }, { name: 'decode', replicas: 4, readyReplicas: 4, updatedReplicas: 1 }] };
  return group;
}

test("each executed rule is a coordination with its analysis, typed as a RayService's", () => {
  const g = roleBasedGroupFromKube(executed(ANALYSIS), undefined);
  expect(g.coordination.map((c) => [c.rule, c.maxSkewPercent, c.roles.map((r) => [r.role, r.updatedPercent])])).toEqual([['pd', 25, [['prefill', 25], ['decode', 25]]]]);
  const a = g.coordination[0].analysis;
  expect(a?.step).toMatchObject({ id: `step/abc/25/${T0}`, kind: 'step', cluster: 'abc', pendingWeight: 25, startTime: timestampFromMs(T0), phase: 'Running' });
  expect(a?.step?.metrics.map((m) => [m.name, m.taken, m.last?.value, m.last?.time])).toEqual([['error-ratio', 1, 0.01, timestampFromMs(T0 + 30_000)]]);
  expect(a?.verdicts.map((v) => [v.kind, v.phase, v.dryRun, v.time])).toEqual([['background', 'Failed', true, timestampFromMs(T0 - 1_000)]]);
  const json = toJson(RoleBasedGroupSchema, g) as any;
  expect(json.coordination[0].analysis.step).toMatchObject({ pendingWeight: 25, startTime: '2026-11-24T12:00:00Z' });
  expect(fromBinary(RoleBasedGroupSchema, toBinary(RoleBasedGroupSchema, g)).coordination[0].analysis).toEqual(a);
});

test('a rollout without analysis has none', () => {
  const g = roleBasedGroupFromKube(executed(undefined), undefined);
  expect(g.coordination).toHaveLength(1);
  expect(g.coordination[0].analysis).toBeUndefined();
  expect('analysis' in (toJson(RoleBasedGroupSchema, g) as any).coordination[0]).toBe(false);
});
