import { ApiObject, Chart, Testing } from 'cdk8s';
import {
  BATCH_LABEL_PREFIX,
  CoordinatedPolicy,
  DEFAULT_TOPOLOGY_KEY,
  GROUP_LABEL,
  ROLE_LABEL,
  RoleBasedGroup,
  RoleBasedGroupProps,
  renderAffinityBatches,
} from '../../lib/cdk8s';
import { CoordinationRule, PodTemplateJson, RoleSpec, validateCoordinatedPolicy, validateRoleBasedGroup } from '../../lib/spec';
import { captureStderr, ofKind, single, synthError } from './helpers';

function template(role: string): PodTemplateJson {
  return { metadata: { labels: { app: role } }, spec: { containers: [{ name: role, image: 'lmsysorg/sglang:v0.5.5' }] } };
}

const ROLES: RoleSpec[] = [
  { name: 'router', replicas: 2, template: template('router') },
  { name: 'prefill', replicas: 10, template: template('prefill') },
  { name: 'decode', replicas: 5, template: template('decode') },
];

const ROLLOUT: CoordinationRule = {
  name: 'pd-rollout',
  roles: ['prefill', 'decode'],
  rollingUpdate: { maxSkew: '10%', maxUnavailable: '10%', partition: '20%' },
  scaling: { maxSkew: '20%', progression: 'OrderReady' },
};

function group(chart: Chart, props: Partial<RoleBasedGroupProps> = {}): RoleBasedGroup {
  return new RoleBasedGroup(chart, 'pd', { metadata: { name: 'pd-inference' }, roles: ROLES, coordination: [ROLLOUT], ...props });
}

function chartIn(namespace = 'pd'): Chart {
  return new Chart(Testing.app(), 'test', { namespace });
}

describe('RoleBasedGroup v1alpha2', () => {
  test('emits a CoordinatedPolicy whose name and namespace equal the group', () => {
    const chart = chartIn();
    const rbg = group(chart);
    expect(rbg.version).toBe('v1alpha2');
    expect(rbg.policy).toBeInstanceOf(CoordinatedPolicy);
    const manifests = Testing.synth(chart);
    expect(manifests.map((m) => m.kind)).toEqual(['RoleBasedGroup', 'CoordinatedPolicy']);
    const g = single(manifests, 'RoleBasedGroup');
    const p = single(manifests, 'CoordinatedPolicy');
    expect(g.apiVersion).toBe('workloads.x-k8s.io/v1alpha2');
    expect(p.apiVersion).toBe('workloads.x-k8s.io/v1alpha2');
    expect(p.metadata.name).toBe(g.metadata.name);
    expect(p.metadata.namespace).toBe(g.metadata.namespace);
    expect(p.metadata).toEqual({ name: 'pd-inference', namespace: 'pd' });
    expect(p.spec).toEqual({
      policies: [
        {
          name: 'pd-rollout',
          roles: ['prefill', 'decode'],
          strategy: { rollingUpdate: ROLLOUT.rollingUpdate, scaling: ROLLOUT.scaling },
        },
      ],
    });
    // no inline coordination in v1alpha2
    expect(g.spec.coordination).toBeUndefined();
    expect(g.spec.roles.map((r: any) => [r.name, r.replicas])).toEqual([
      ['router', 2],
      ['prefill', 10],
      ['decode', 5],
    ]);
    expect(g.spec.roles[1].standalonePattern.template).toEqual(template('prefill'));
    // what was synthesized passes the wire validators
    expect(validateRoleBasedGroup(g)).toEqual({ errors: [], warnings: [] });
    expect(validateCoordinatedPolicy(p, g)).toEqual({ errors: [], warnings: [] });
  });

  test('the policy follows a group namespace set in metadata, and a generated group name', () => {
    const chart = chartIn();
    const rbg = new RoleBasedGroup(chart, 'pd', { metadata: { namespace: 'other' }, roles: ROLES, coordination: [ROLLOUT] });
    const manifests = Testing.synth(chart);
    const g = single(manifests, 'RoleBasedGroup');
    const p = single(manifests, 'CoordinatedPolicy');
    expect(g.metadata.name).toBe(rbg.name);
    expect(p.metadata).toEqual({ name: rbg.name, namespace: 'other' });
  });

  test('no policy without rolling-update or scaling rules', () => {
    const chart = chartIn();
    const rbg = group(chart, { coordination: [] });
    expect(rbg.policy).toBeUndefined();
    expect(Testing.synth(chart).map((m) => m.kind)).toEqual(['RoleBasedGroup']);
  });

  test('role rolling-update, dependencies and leader/worker size are rendered in the v1alpha2 shape', () => {
    const chart = chartIn();
    group(chart, {
      coordination: [],
      roles: [
        { name: 'router', replicas: 1, template: template('router'), dependencies: ['decode'], rollingUpdate: { maxUnavailable: 1, partition: 0 } },
        { name: 'decode', replicas: 2, template: template('decode'), leaderWorkerSize: 4 },
      ],
    });
    const g = single(Testing.synth(chart), 'RoleBasedGroup');
    expect(g.spec.roles[0]).toEqual({
      name: 'router',
      replicas: 1,
      dependencies: ['decode'],
      rolloutStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, partition: 0 } },
      standalonePattern: { template: template('router') },
    });
    expect(g.spec.roles[1].leaderWorkerPattern).toEqual({ size: 4, template: template('decode') });
  });
});

describe('RoleBasedGroup v1alpha1', () => {
  test('emits inline spec.coordination and no CoordinatedPolicy', () => {
    const chart = chartIn();
    const rbg = group(chart, { version: 'v1alpha1' });
    expect(rbg.policy).toBeUndefined();
    const manifests = Testing.synth(chart);
    expect(ofKind(manifests, 'CoordinatedPolicy')).toEqual([]);
    const g = single(manifests, 'RoleBasedGroup');
    expect(g.apiVersion).toBe('workloads.x-k8s.io/v1alpha1');
    expect(g.spec.coordination).toEqual([
      { name: 'pd-rollout', roles: ['prefill', 'decode'], strategy: { rollingUpdate: ROLLOUT.rollingUpdate, scaling: ROLLOUT.scaling } },
    ]);
    expect(g.spec.roles[1].template).toEqual(template('prefill'));
    // the synthesized v1alpha1 manifest passes the wire validator, strategy and all
    expect(validateRoleBasedGroup(g)).toEqual({ errors: [], warnings: [] });
  });

  test('integer partitions are rejected in v1alpha1 at synthesis', () => {
    const chart = chartIn();
    group(chart, { version: 'v1alpha1', coordination: [{ name: 'r', roles: ['prefill', 'decode'], rollingUpdate: { partition: 2 } }] });
    expect(synthError(chart)).toContain('RoleBasedGroup/pd-inference: spec.coordination[0].rollingUpdate.partition: must be a percent string');
  });
});

describe('executor operator', () => {
  test('the coordination annotation is the same text whatever order the rule props were written in', () => {
    const annotation = (rule: CoordinationRule) => {
      const chart = chartIn();
      group(chart, { executor: 'operator', coordination: [rule] });
      return single(Testing.synth(chart), 'RoleBasedGroup').metadata.annotations['rayshift.dev/coordination'];
    };
    const written = annotation({ name: 'pd-rollout', roles: ['prefill', 'decode'], rollingUpdate: { maxSkew: '10%', maxUnavailable: '10%', partition: '20%' }, progressDeadlineSeconds: 600 });
    const reordered = annotation({ progressDeadlineSeconds: 600, rollingUpdate: { partition: '20%', maxUnavailable: '10%', maxSkew: '10%' }, roles: ['prefill', 'decode'], name: 'pd-rollout' });
    expect(reordered).toBe(written);
    expect(written).toBe('{"policies":[{"name":"pd-rollout","progressDeadlineSeconds":600,"roles":["prefill","decode"],"strategy":{"rollingUpdate":{"maxSkew":"10%","maxUnavailable":"10%","partition":"20%"}}}]}');
  });
});

describe('validation at synthesis', () => {
  test('every problem of the group is listed in one error', () => {
    const chart = chartIn();
    group(chart, {
      roles: [
        { name: 'prefill', replicas: 10, template: template('prefill'), rollingUpdate: { partition: '100%' } },
        { name: 'decode', replicas: 5, template: template('decode') },
      ],
      coordination: [{ name: 'r', roles: ['prefill', 'decoder'], rollingUpdate: { maxSkew: 5 as unknown as string } }],
    });
    const message = synthError(chart);
    expect(message).toContain('spec.roles[0].rollingUpdate.partition: "100%" keeps 10 of 10 replicas');
    expect(message).toContain('spec.coordination[0].roles[1]: "decoder" is not a role of this group');
    expect(message).toContain('spec.coordination[0].rollingUpdate.maxSkew: must be a percent string such as "10%"; got the integer 5');
    expect(message).toContain('spec.coordination[0].rollingUpdate: role "prefill" also sets its own rolling-update partition');
  });

  test('an invalid group name fails synthesis', () => {
    const chart = chartIn();
    group(chart, { metadata: { name: 'PD_Inference' }, coordination: [] });
    expect(synthError(chart)).toContain('RoleBasedGroup/PD_Inference: metadata.name: "PD_Inference" is not a DNS-1123 label');
  });
});

describe('AffinityScheduling', () => {
  const PD: RoleSpec[] = [
    { name: 'prefill', replicas: 4, template: template('prefill') },
    { name: 'decode', replicas: 2, template: template('decode') },
  ];
  const KEY = `${BATCH_LABEL_PREFIX}colocate`;

  function affinityGroup(chart: Chart, batchMode: 'Sequential' | 'Parallel', roles = PD, extra: Partial<CoordinationRule> = {}): RoleBasedGroup {
    return new RoleBasedGroup(chart, 'pd', {
      metadata: { name: 'pd-colocated' },
      roles,
      coordination: [{ name: 'colocate', roles: ['prefill', 'decode'], affinityScheduling: { ratios: { prefill: 2, decode: 1 }, batchMode }, ...extra }],
    });
  }

  test('2:1 prefill:decode over 4/2 replicas renders two batches per role; each batch selects exactly its own label and the group', () => {
    const chart = chartIn();
    const rbg = affinityGroup(chart, 'Sequential');
    const manifests = Testing.synth(chart);
    expect(ofKind(manifests, 'CoordinatedPolicy')).toEqual([]);
    const roles = single(manifests, 'RoleBasedGroup').spec.roles;
    expect(roles.map((r: any) => [r.name, r.replicas])).toEqual([
      ['prefill-b0', 2],
      ['prefill-b1', 2],
      ['decode-b0', 1],
      ['decode-b1', 1],
    ]);
    for (const r of roles) {
      const [role, batch] = r.name.split('-');
      const pod = r.standalonePattern.template;
      expect(pod.metadata.labels).toEqual({ app: role, [GROUP_LABEL]: rbg.name, [ROLE_LABEL]: role, [KEY]: batch });
      const terms = pod.spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution;
      expect(terms).toEqual([{ labelSelector: { matchLabels: { [GROUP_LABEL]: 'pd-colocated', [KEY]: batch } }, topologyKey: DEFAULT_TOPOLOGY_KEY }]);
      expect(pod.spec.containers).toEqual(template(role).spec.containers);
    }
  });

  test('Sequential: batch 1 depends on every role of batch 0; batch 0 depends on nothing', () => {
    const chart = chartIn();
    affinityGroup(chart, 'Sequential');
    const roles = single(Testing.synth(chart), 'RoleBasedGroup').spec.roles;
    const deps = Object.fromEntries(roles.map((r: any) => [r.name, r.dependencies]));
    expect(deps['prefill-b0']).toBeUndefined();
    expect(deps['decode-b0']).toBeUndefined();
    expect([...deps['prefill-b1']].sort()).toEqual(['decode-b0', 'prefill-b0']);
    expect([...deps['decode-b1']].sort()).toEqual(['decode-b0', 'prefill-b0']);
  });

  test('Parallel: no batch depends on another', () => {
    const chart = chartIn();
    affinityGroup(chart, 'Parallel');
    const roles = single(Testing.synth(chart), 'RoleBasedGroup').spec.roles;
    expect(roles).toHaveLength(4);
    for (const r of roles) expect(r.dependencies).toBeUndefined();
  });

  test('replicas beyond the common number of batches go to <role>-rest without affinity (and a warning)', () => {
    const chart = chartIn();
    const roles: RoleSpec[] = [
      { name: 'prefill', replicas: 4, template: template('prefill') },
      { name: 'decode', replicas: 3, template: template('decode') },
      { name: 'router', replicas: 1, template: template('router'), dependencies: ['decode'] },
    ];
    affinityGroup(chart, 'Parallel', roles);
    const { result, stderr } = captureStderr(() => Testing.synth(chart));
    expect(stderr).toContain('warning: RoleBasedGroup/pd-colocated: spec.coordination[0].affinityScheduling.ratios: roles make different numbers of batches (prefill: 2, decode: 3)');
    const out = single(result, 'RoleBasedGroup').spec.roles;
    expect(out.map((r: any) => [r.name, r.replicas])).toEqual([
      ['prefill-b0', 2],
      ['prefill-b1', 2],
      ['decode-b0', 1],
      ['decode-b1', 1],
      ['decode-rest', 1],
      ['router', 1],
    ]);
    const rest = out.find((r: any) => r.name === 'decode-rest');
    expect(rest.standalonePattern.template.spec.affinity).toBeUndefined();
    expect(rest.standalonePattern.template.metadata.labels).toEqual({ app: 'decode', [GROUP_LABEL]: 'pd-colocated', [ROLE_LABEL]: 'decode' });
    // a dependency on a split role is expanded to all of its parts
    expect(out.find((r: any) => r.name === 'router').dependencies).toEqual(['decode-b0', 'decode-b1', 'decode-rest']);
  });

  test('a topologyKey is used by every batch', () => {
    const rendered = renderAffinityBatches('g', PD, [
      { name: 'c', roles: ['prefill', 'decode'], affinityScheduling: { ratios: { prefill: 2, decode: 1 }, topologyKey: 'topology.kubernetes.io/zone' } },
    ]);
    for (const r of rendered.roles) {
      const term = (r.template.spec.affinity as any).podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0];
      expect(term.topologyKey).toBe('topology.kubernetes.io/zone');
    }
    // default batch mode is Sequential
    expect(rendered.roles.find((r) => r.name === 'decode-b1')!.dependencies).toEqual(['prefill-b0', 'decode-b0']);
    expect(rendered.rules).toEqual([]);
  });

  test('a rolling update in the same rule goes to the CoordinatedPolicy over the batch roles', () => {
    const chart = chartIn();
    affinityGroup(chart, 'Parallel', PD, { rollingUpdate: { maxSkew: '50%', partition: '50%' } });
    const manifests = Testing.synth(chart);
    const p = single(manifests, 'CoordinatedPolicy');
    expect(p.spec.policies).toEqual([
      { name: 'colocate', roles: ['prefill-b0', 'prefill-b1', 'decode-b0', 'decode-b1'], strategy: { rollingUpdate: { maxSkew: '50%', partition: '50%' } } },
    ]);
    expect(validateCoordinatedPolicy(p, single(manifests, 'RoleBasedGroup')).errors).toEqual([]);
  });

  test('bad ratios fail synthesis instead of rendering (even ratios of 0 for every role, with a policy)', () => {
    const chart = chartIn();
    new RoleBasedGroup(chart, 'pd', {
      metadata: { name: 'pd-colocated' },
      roles: PD,
      coordination: [{ name: 'colocate', roles: ['prefill', 'decode'], affinityScheduling: { ratios: { prefill: 0, decode: 0 } }, rollingUpdate: { maxSkew: '10%' } }],
    });
    const message = synthError(chart);
    expect(message).toContain('spec.coordination[0].affinityScheduling.ratios.prefill: must be a positive integer');
    expect(message).toContain('spec.coordination[0].affinityScheduling.ratios.decode: must be a positive integer');
  });

  test('a ratio that does not divide the replicas fails synthesis', () => {
    const chart = chartIn();
    new RoleBasedGroup(chart, 'pd', {
      metadata: { name: 'pd-colocated' },
      roles: PD,
      coordination: [{ name: 'colocate', roles: ['prefill', 'decode'], affinityScheduling: { ratios: { prefill: 3, decode: 1 } } }],
    });
    expect(synthError(chart)).toContain('ratios.prefill: 3 does not divide role "prefill"\'s 4 replicas');
  });

  test('int32-many replicas at ratio 1 fail synthesis at the ratio, without rendering a role per batch first', () => {
    const chart = chartIn();
    const replicas = 2 ** 31 - 1;
    new RoleBasedGroup(chart, 'pd', {
      metadata: { name: 'pd-colocated' },
      roles: [{ name: 'prefill', replicas, template: template('prefill') }, { name: 'decode', replicas, template: template('decode') }],
      coordination: [{ name: 'colocate', roles: ['prefill', 'decode'], affinityScheduling: { ratios: { prefill: 1, decode: 1 } } }],
    });
    expect(synthError(chart)).toContain('ratios.prefill: 1 makes 2147483647 batches of role "prefill"\'s 2147483647 replicas; at most 500');
  });
});

describe('escape hatch', () => {
  test('ApiObject.of works on the group and on its policy', () => {
    const chart = chartIn();
    const rbg = group(chart);
    expect(ApiObject.of(rbg)).toBe(rbg.apiObject);
    expect(ApiObject.of(rbg.policy!).kind).toBe('CoordinatedPolicy');
    ApiObject.of(rbg).metadata.addAnnotation('owner', 'inference');
    expect(single(Testing.synth(chart), 'RoleBasedGroup').metadata.annotations).toEqual({ owner: 'inference' });
  });
});
