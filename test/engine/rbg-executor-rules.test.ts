/**
 * The executor's contract with the constructs: `RoleBasedGroup` with `executor: 'operator'`
 * synthesizes the label and the `rayshift.dev/coordination` annotation (and no upstream
 * coordination), and `readCoordination` reads exactly those rules back.
 */
import { Testing } from 'cdk8s';
import { RoleBasedGroup, RoleBasedGroupProps } from '../../lib/cdk8s/rolebasedgroup';
import { readCoordination } from '../../lib/engine/rbg-executor-rules';
import { RBG_EXECUTOR_DEFAULTS } from '../../lib/spec/rbg-executor';
import { COORDINATION_ANNOTATION, EXECUTOR_LABEL } from '../../lib/spec/rbg';

const template = { spec: { containers: [{ name: 'main', image: 'sglang:v1' }] } };

function synth(props: Partial<RoleBasedGroupProps>): any[] {
  const chart = Testing.chart();
  new RoleBasedGroup(chart, 'pd', {
    metadata: { name: 'pd' },
    roles: [
      { name: 'prefill', replicas: 40, template },
      { name: 'decode', replicas: 20, template },
    ],
    ...props,
  });
  return Testing.synth(chart);
}

const rolling = { name: 'pd-rollout', roles: ['prefill', 'decode'], rollingUpdate: { maxSkew: '10%', maxUnavailable: '10%', partition: 2 } };

describe.each(['v1alpha1', 'v1alpha2'] as const)('executor operator, %s', (version) => {
  test('labels the group, puts the rules in the annotation and synthesizes no upstream coordination', () => {
    const objects = synth({ version, executor: 'operator', coordination: [{ ...rolling, progressDeadlineSeconds: 300, rollbackOnDeadline: true, capacityPolicy: 'fail', surgeUnschedulableSeconds: 30 }] });
    expect(objects.map((o) => o.kind)).toEqual(['RoleBasedGroup']);
    const [group] = objects;
    expect(group.metadata.labels).toEqual({ [EXECUTOR_LABEL]: 'operator' });
    expect(group.spec.coordination).toBeUndefined();
    expect(JSON.parse(group.metadata.annotations[COORDINATION_ANNOTATION])).toEqual({
      policies: [{ name: 'pd-rollout', roles: ['prefill', 'decode'], strategy: { rollingUpdate: rolling.rollingUpdate }, progressDeadlineSeconds: 300, rollbackOnDeadline: true, capacityPolicy: 'fail', surgeUnschedulableSeconds: 30 }],
    });
    expect(readCoordination(group)).toEqual({
      rules: [
        {
          name: 'pd-rollout',
          maxSkewPercent: 10,
          roles: [
            { name: 'prefill', replicas: 40, partition: 2, maxUnavailable: 4 },
            { name: 'decode', replicas: 20, partition: 2, maxUnavailable: 2 },
          ],
          progressDeadlineSeconds: 300,
          rollbackOnDeadline: true,
          capacityPolicy: 'fail',
          surgeUnschedulableSeconds: 30,
        },
      ],
    });
  });
});

test('executor rbg (the default) keeps the CoordinatedPolicy and rejects the rayshift-only deadline', () => {
  expect(synth({ coordination: [rolling] }).map((o) => o.kind)).toEqual(['RoleBasedGroup', 'CoordinatedPolicy']);
  expect(() => synth({ coordination: [{ ...rolling, progressDeadlineSeconds: 60 }] })).toThrow(/progressDeadlineSeconds: is enforced only by the rayshift executors/);
  expect(() => synth({ coordination: [{ ...rolling, capacityPolicy: 'fail' }] })).toThrow(/spec.coordination\[0\].capacityPolicy: is enforced only by the rayshift executors \(operator, pulumi\); the upstream RBG controller does not watch whether the scheduler places the rollout's Pods/);
  expect(() => synth({ coordination: [{ ...rolling, surgeUnschedulableSeconds: 30 }] })).toThrow(/spec.coordination\[0\].surgeUnschedulableSeconds: is enforced only by the rayshift executors/);
});

test('rayshift executors check the scheduler watch\'s settings, naming the field, the value and what is allowed', () => {
  expect(() => synth({ executor: 'operator', coordination: [{ ...rolling, capacityPolicy: 'shrinkFirst' as never }] })).toThrow(/spec.coordination\[0\].capacityPolicy: "shrinkFirst" is not a capacity policy of a RoleBasedGroup rule; allowed: wait, fail/);
  expect(() => synth({ executor: 'pulumi', coordination: [{ ...rolling, surgeUnschedulableSeconds: 0 }] })).toThrow(/spec.coordination\[0\].surgeUnschedulableSeconds: must be an integer from 1 to 2147483647 \(int32\); got 0/);
});

test('rayshift executors refuse coordinated scaling, which only upstream executes', () => {
  expect(() => synth({ executor: 'pulumi', coordination: [{ ...rolling, scaling: { maxSkew: '10%' } }] })).toThrow(/scaling: coordinated scaling is executed only by the upstream RBG controller/);
});

test('v1alpha1 with executor operator accepts integer counts (upstream\'s inline coordination is percent-only)', () => {
  expect(() => synth({ version: 'v1alpha1', executor: 'operator', coordination: [{ ...rolling, rollingUpdate: { maxSkew: '1%', maxUnavailable: 1 } }] })).not.toThrow();
  expect(() => synth({ version: 'v1alpha1', coordination: [{ ...rolling, rollingUpdate: { maxSkew: '1%', maxUnavailable: 1 } }] })).toThrow(/accepts percents only/);
});

describe('readCoordination', () => {
  const group = (annotation?: string) => ({
    metadata: { name: 'pd', ...(annotation !== undefined ? { annotations: { [COORDINATION_ANNOTATION]: annotation } } : {}) },
    spec: { roles: [{ name: 'prefill', replicas: 4 }, { name: 'decode', replicas: 2 }] },
  });

  test('no annotation: no rules', () => {
    expect(readCoordination(group())).toEqual({ rules: [] });
  });

  test('defaults: maxSkew 100% and the default deadline; roles missing from the group are dropped', () => {
    const r = readCoordination(group(JSON.stringify({ policies: [{ name: 'r', roles: ['prefill', 'decode', 'ghost'], strategy: { rollingUpdate: { maxUnavailable: 1 } } }] })));
    expect(r.rules).toEqual([
      {
        name: 'r',
        maxSkewPercent: 100,
        roles: [
          { name: 'prefill', replicas: 4, partition: 0, maxUnavailable: 1 },
          { name: 'decode', replicas: 2, partition: 0, maxUnavailable: 1 },
        ],
        progressDeadlineSeconds: RBG_EXECUTOR_DEFAULTS.progressDeadlineSeconds,
        rollbackOnDeadline: false,
        // The RayService's defaults (RAY_SERVICE_DEFAULTS), written out.
        capacityPolicy: 'wait',
        surgeUnschedulableSeconds: 120,
      },
    ]);
  });

  test.each([
    ['not JSON', '{policies', /is not JSON/],
    ['an integer maxSkew', JSON.stringify({ policies: [{ name: 'r', roles: ['prefill', 'decode'], strategy: { rollingUpdate: { maxSkew: 5 } } }] }), /maxSkew: must be a percent string/],
    ['a zero deadline', JSON.stringify({ policies: [{ name: 'r', roles: ['prefill', 'decode'], strategy: { rollingUpdate: { maxSkew: '5%' } }, progressDeadlineSeconds: 0 }] }), /progressDeadlineSeconds: must be an integer ≥ 1/],
    ['no policies', JSON.stringify({}), /spec.policies: must list at least one rule/],
    ['shrinkFirst', JSON.stringify({ policies: [{ name: 'r', roles: ['prefill', 'decode'], strategy: { rollingUpdate: {} }, capacityPolicy: 'shrinkFirst' }] }), /spec.policies\[0\].capacityPolicy: "shrinkFirst" is not a capacity policy of a RoleBasedGroup rule; allowed: wait, fail/],
    ['a zero bound', JSON.stringify({ policies: [{ name: 'r', roles: ['prefill', 'decode'], strategy: { rollingUpdate: {} }, surgeUnschedulableSeconds: 0 }] }), /spec.policies\[0\].surgeUnschedulableSeconds: must be an integer from 1 to 2147483647 \(int32\); got 0/],
    ['a fractional bound', JSON.stringify({ policies: [{ name: 'r', roles: ['prefill', 'decode'], strategy: { rollingUpdate: {} }, surgeUnschedulableSeconds: 1.5 }] }), /surgeUnschedulableSeconds: must be an integer from 1 to 2147483647 \(int32\); got 1.5/],
    ['a bound past int32', JSON.stringify({ policies: [{ name: 'r', roles: ['prefill', 'decode'], strategy: { rollingUpdate: {} }, surgeUnschedulableSeconds: 2147483648 }] }), /surgeUnschedulableSeconds: must be an integer from 1 to 2147483647 \(int32\); got 2147483648/],
  ])('%s is a problem naming the field', (_what, text, message) => {
    const r = readCoordination(group(text));
    expect(r.rules).toBeUndefined();
    expect(r.problem).toMatch(message);
  });
});

describe('AffinityScheduling release waves', () => {
  const colocate = (batchMode: 'Sequential' | 'Parallel') => ({
    name: 'colocate',
    roles: ['prefill', 'decode'],
    affinityScheduling: { ratios: { prefill: 2, decode: 1 }, batchMode },
    rollingUpdate: { maxSkew: '50%' },
  });
  const roles = (prefill: number, decode: number) => [
    { name: 'prefill', replicas: prefill, template },
    { name: 'decode', replicas: decode, template },
  ];

  test('Sequential: one wave per batch, in batch order, each with every role of its batch', () => {
    const [group] = synth({ executor: 'operator', roles: roles(4, 2), coordination: [colocate('Sequential')] });
    expect(group.spec.roles.map((r: any) => r.name)).toEqual(['prefill-b0', 'prefill-b1', 'decode-b0', 'decode-b1']);
    expect(readCoordination(group).rules![0].waves).toEqual([
      ['prefill-b0', 'decode-b0'],
      ['prefill-b1', 'decode-b1'],
    ]);
  });

  test('Parallel: every batch in one wave', () => {
    const [group] = synth({ executor: 'operator', roles: roles(4, 2), coordination: [colocate('Parallel')] });
    expect(readCoordination(group).rules![0].waves).toEqual([['prefill-b0', 'prefill-b1', 'decode-b0', 'decode-b1']]);
  });

  test('waves naming a role outside the rule, or a role twice, are problems', () => {
    const annotation = (waves: unknown) => ({
      metadata: { name: 'pd', annotations: { [COORDINATION_ANNOTATION]: JSON.stringify({ policies: [{ name: 'r', roles: ['a', 'b'], strategy: { rollingUpdate: { maxSkew: '5%' } }, waves }] }) } },
      spec: { roles: [{ name: 'a' }, { name: 'b' }] },
    });
    expect(readCoordination(annotation([['a'], ['c']])).problem).toMatch(/waves: "c" is not a role of the rule/);
    expect(readCoordination(annotation([['a', 'b'], ['a']])).problem).toMatch(/waves: "a" is in more than one wave/);
    expect(readCoordination(annotation('a')).problem).toMatch(/waves: must be a list of lists of role names/);
  });
});
