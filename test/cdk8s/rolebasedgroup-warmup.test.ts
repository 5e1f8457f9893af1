/** The `RoleBasedGroupWarmup` construct and the `warmup` option of `RoleBasedGroup` (RBG v0.8 only). */
import { Chart, Testing } from 'cdk8s';
import { RoleBasedGroup, RoleBasedGroupProps, RoleBasedGroupWarmup, RoleBasedGroupWarmupProps } from '../../lib/cdk8s';
import { COORDINATION_ANNOTATION, PodTemplateJson, RoleSpec } from '../../lib/spec';
import { captureStderr, ofKind, single, synthError } from './helpers';

const template = (image: string, init?: string): PodTemplateJson => ({
  spec: { containers: [{ name: 'engine', image }], ...(init ? { initContainers: [{ name: 'fetch', image: init }] } : {}) },
});
const ROLES: RoleSpec[] = [
  { name: 'prefill', replicas: 4, template: template('sglang:v2', 'fetcher:v1') },
  { name: 'decode', replicas: 2, template: template('sglang:v2') },
  { name: 'router', replicas: 1, template: template('router:v1') },
];
const RULE = { name: 'pd', roles: ['prefill', 'decode'], rollingUpdate: { maxSkew: '10%' } };

function chart(): Chart {
  return new Chart(Testing.app(), 'test', { namespace: 'pd' });
}

function group(c: Chart, props: Partial<RoleBasedGroupProps>): RoleBasedGroup {
  return new RoleBasedGroup(c, 'pd', { metadata: { name: 'pd' }, rbgVersion: 'v0.8', roles: ROLES, coordination: [RULE], ...props });
}

describe('RoleBasedGroupWarmup', () => {
  test('targets a group construct: every role preloads the images of its template, in its namespace', () => {
    const c = chart();
    const g = group(c, {});
    new RoleBasedGroupWarmup(c, 'w', { metadata: { name: 'pd-warm' }, group: { group: g }, policies: { parallelism: 2, backoffLimitPerNode: 1, maxFailedNodes: 1, globalTimeoutSeconds: 600 } });
    const w = single(Testing.synth(c), 'RoleBasedGroupWarmup');
    expect(w.apiVersion).toBe('workloads.x-k8s.io/v1alpha2');
    expect(w.metadata).toEqual({ name: 'pd-warm', namespace: 'pd' });
    expect(w.spec).toEqual({
      targetRoleBasedGroup: {
        name: 'pd',
        roles: {
          prefill: { imagePreload: { images: ['fetcher:v1', 'sglang:v2'] } },
          decode: { imagePreload: { images: ['sglang:v2'] } },
          router: { imagePreload: { images: ['router:v1'] } },
        },
      },
      policies: { parallelism: 2, backoffLimitPerNode: 1, maxFailedNodes: 1, globalTimeoutSeconds: 600 },
    });
  });

  test('targets nodes by selector with a custom action and pull secrets', () => {
    const c = chart();
    new RoleBasedGroupWarmup(c, 'w', {
      metadata: { name: 'gpu-warm' },
      nodes: { selector: { pool: 'gpu' }, actions: { imagePreload: { images: ['sglang:v2'], pullSecrets: ['regcred'] }, customizedAction: { containers: [{ name: 'model', image: 'fetch:v1', args: ['qwen3'] }] } } },
      tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }],
    });
    const w = single(Testing.synth(c), 'RoleBasedGroupWarmup');
    expect(w.spec.targetNodes).toEqual({
      nodeSelector: { pool: 'gpu' },
      imagePreload: { images: ['sglang:v2'], pullSecrets: [{ name: 'regcred' }] },
      customizedAction: { containers: [{ name: 'model', image: 'fetch:v1', args: ['qwen3'] }] },
    });
    expect(w.spec.tolerations).toHaveLength(1);
  });

  test.each<[string, Partial<RoleBasedGroupWarmupProps>, RegExp]>([
    ['a release without the CRD', { rbgVersion: 'v0.7', nodes: { names: ['n1'], actions: { imagePreload: { images: ['a:1'] } } } }, /rbgVersion: rbgVersion "v0\.7" has no RoleBasedGroupWarmup CRD .*allowed: rbgVersion "v0\.8"/],
    ['both targets', { nodes: { names: ['n1'], actions: { imagePreload: { images: ['a:1'] } } }, group: { group: 'pd', roles: { a: { imagePreload: { images: ['a:1'] } } } } }, /spec: sets both targetNodes and targetRoleBasedGroup/],
    ['no target', {}, /spec: sets neither targetNodes and targetRoleBasedGroup/],
    ['names and selector', { nodes: { names: ['n1'], selector: { a: 'b' }, actions: { imagePreload: { images: ['a:1'] } } } }, /spec\.targetNodes: sets both nodeNames and nodeSelector/],
    ['no action', { nodes: { names: ['n1'], actions: {} } }, /spec\.targetNodes: sets no action/],
    ['no image', { nodes: { names: ['n1'], actions: { imagePreload: { images: [] } } } }, /spec\.targetNodes\.imagePreload\.images: must list at least one image/],
    ['parallelism 0', { nodes: { names: ['n1'], actions: { imagePreload: { images: ['a:1'] } } }, policies: { parallelism: 0 } }, /spec\.policies\.parallelism: must be an integer from 1 to 2147483647 \(nodes warmed at once\); got 0/],
    ['maxFailedNodes alone', { nodes: { names: ['n1'], actions: { imagePreload: { images: ['a:1'] } } }, policies: { maxFailedNodes: 1 } }, /spec\.policies\.maxFailedNodes: needs backoffLimitPerNode/],
    ['timeout 0', { nodes: { names: ['n1'], actions: { imagePreload: { images: ['a:1'] } } }, policies: { globalTimeoutSeconds: 0 } }, /spec\.policies\.globalTimeoutSeconds: must be an integer from 1 to/],
  ])('refuses %s, naming field, value and allowed range', (_label, props, message) => {
    const c = chart();
    new RoleBasedGroupWarmup(c, 'w', { metadata: { name: 'w' }, ...props });
    expect(synthError(c)).toMatch(message);
  });

  test('a role the target group construct does not have is refused, and so is the group construct\'s v0.7 release', () => {
    const c = chart();
    const g = group(c, { rbgVersion: 'v0.7' });
    new RoleBasedGroupWarmup(c, 'w', { metadata: { name: 'w' }, group: { group: g, roles: { prefil: { imagePreload: { images: ['a:1'] } } } } });
    const message = synthError(c);
    expect(message).toMatch(/spec\.targetRoleBasedGroup\.roles\.prefil: "prefil" is not a role of the group; roles: prefill, decode, router/);
    expect(message).toMatch(/rbgVersion "v0\.7" has no RoleBasedGroupWarmup CRD/);
  });
});

describe('RoleBasedGroup warmup option', () => {
  test('executor operator: the coordination annotation carries the warmup with its defaults; no Warmup object is synthesized', () => {
    const c = chart();
    group(c, { executor: 'operator', warmup: { parallelism: 3 } });
    const out = Testing.synth(c);
    expect(ofKind(out, 'RoleBasedGroupWarmup')).toEqual([]);
    const doc = JSON.parse(single(out, 'RoleBasedGroup').metadata.annotations[COORDINATION_ANNOTATION]);
    expect(doc.warmup).toEqual({ roles: ['prefill', 'decode'], pullSecrets: [], parallelism: 3, backoffLimitPerNode: 2, maxFailedNodes: 0, globalTimeoutSeconds: 900, onFailure: 'Fail', tolerations: [] });
  });

  test('executor rbg: a Warmup child named after what it preloads (a new image is a new warmup), with a warning that RBG does not wait for it', () => {
    const names = ['sglang:v2', 'sglang:v2', 'sglang:v3'].map((image) => {
      const c = chart();
      const roles = ROLES.map((r) => (r.name === 'router' ? r : { ...r, template: template(image) }));
      const { result, stderr } = captureStderr(() => {
        group(c, { roles, warmup: { roles: ['decode'] } });
        return Testing.synth(c);
      });
      expect(stderr).toContain('warning: RoleBasedGroup/pd: warmup: RBG v0.8 does not wait for a RoleBasedGroupWarmup before rolling');
      const w = single(result, 'RoleBasedGroupWarmup');
      expect(w.spec.targetRoleBasedGroup).toEqual({ name: 'pd', roles: { decode: { imagePreload: { images: [image] } } } });
      return w.metadata.name as string;
    });
    expect(names[0]).toMatch(/^pd-warmup-[0-9a-f]{8}$/);
    expect(names[0]).toBe(names[1]);
    expect(names[2]).not.toBe(names[0]);
  });

  test.each<[string, Partial<RoleBasedGroupProps>, RegExp]>([
    ['on RBG v0.7', { rbgVersion: 'v0.7', executor: 'operator', warmup: {} }, /warmup: rbgVersion "v0\.7" has no RoleBasedGroupWarmup CRD \(it first shipped in RBG v0\.8\.0-alpha\.5\); allowed: rbgVersion "v0\.8"/],
    ['an uncoordinated role', { executor: 'operator', warmup: { roles: ['router'] } }, /warmup\.roles\[0\]: "router" is not a role of a rolling-update rule; allowed: prefill, decode/],
    ['an unknown failure action', { executor: 'operator', warmup: { onFailure: 'Retry' as never } }, /warmup\.onFailure: "Retry" is not a failure action; allowed: Fail, Proceed/],
    ['a negative failure limit', { executor: 'pulumi', warmup: { maxFailedNodes: -1 } }, /warmup\.maxFailedNodes: must be an integer from 0 to 2147483647 \(failed nodes tolerated\); got -1/],
    ['no rolling-update rule', { executor: 'operator', coordination: [], warmup: {} }, /warmup: warms the nodes before a coordinated rolling update, but no rule has rollingUpdate/],
  ])('is refused %s', (_label, props, message) => {
    const c = chart();
    group(c, props);
    expect(synthError(c)).toMatch(message);
  });
});
