/**
 * `rayshift plan` tells the whole cost, and `validate` what coordinates nothing: a RayService
 * without a strategy plans KubeRay's default NewCluster with its peak in Pods and GPUs; None says
 * nothing rolls out; a maxSkew that cannot hold is named with the bound that can; a
 * CoordinatedPolicy of no group and an annotation rule naming a missing role are reported, and
 * plan says what it skipped and why. Numbers are worked out by hand in the comments.
 */
import { parse, stringify } from 'yaml';
import { COORDINATION_ANNOTATION, EXECUTOR_LABEL } from '../../lib/spec/rbg';
import { rayshiftIn } from './cli-io';

/** A ray.io/v1 RayService of a CPU head and 4 workers × 2 GPUs (no autoscaler): 5 Pods, 8 GPUs a cluster. */
function gpuService(upgradeStrategy?: object, apiVersion = 'ray.io/v1'): string {
  const pod = (name: string, limits: object) => ({ spec: { containers: [{ name, image: 'rayproject/ray:2.52.0', resources: { limits } }] } });
  return stringify({
    apiVersion,
    kind: 'RayService',
    metadata: { name: 'llm' },
    spec: {
      serveConfigV2: 'applications:\n  - name: llm\n    import_path: app:app\n',
      ...(upgradeStrategy ? { upgradeStrategy } : {}),
      rayClusterConfig: {
        headGroupSpec: { rayStartParams: {}, template: pod('ray-head', { cpu: '4' }) },
        workerGroupSpecs: [{ groupName: 'gpu', replicas: 4, minReplicas: 4, maxReplicas: 4, rayStartParams: {}, template: pod('ray-worker', { cpu: '8', 'nvidia.com/gpu': '2' }) }],
      },
    },
  });
}

/** A v1alpha2 group of 7 prefill and 3 decode replicas with one GPU each. */
function group(name: string, extra: { annotations?: Record<string, string>; labels?: Record<string, string> } = {}): object {
  const role = (r: string, replicas: number) => ({ name: r, replicas, standalonePattern: { template: { spec: { containers: [{ name: r, image: 'sglang:v1', resources: { limits: { 'nvidia.com/gpu': '1' } } }] } } } });
  return { apiVersion: 'workloads.x-k8s.io/v1alpha2', kind: 'RoleBasedGroup', metadata: { name, namespace: 'default', ...extra }, spec: { roles: [role('prefill', 7), role('decode', 3)] } };
}

const policy = (name: string, maxSkew: string) => ({
  apiVersion: 'workloads.x-k8s.io/v1alpha2',
  kind: 'CoordinatedPolicy',
  metadata: { name, namespace: 'default' },
  spec: { policies: [{ name: 'pd-rollout', roles: ['prefill', 'decode'], strategy: { rollingUpdate: { maxSkew, maxUnavailable: 1 } } }] },
});

const yamlOf = (...objects: object[]) => objects.map((o) => stringify(o)).join('---\n');

describe('RayService plans', () => {
  test('without upgradeStrategy: KubeRay default NewCluster, 200% and 10 Pods, 16 GPUs for the 60 s deletion delay', async () => {
    const r = await rayshiftIn(['plan', '-'], { stdin: gpuService() });
    expect([r.code, r.stderr]).toEqual([0, '']);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toBe('RayService llm: NewCluster');
    expect(lines[1]).toMatch(/^ {2}spec\.upgradeStrategy\.type is unset: KubeRay v1\.7\.0 upgrades with NewCluster .*ENABLE_ZERO_DOWNTIME=false/);
    expect(r.stdout).not.toContain('weight %');
    expect(r.stdout).toMatch(/ {5}0s {2}create-new, scale-pending +100%: 5 Pods, 8 nvidia\.com\/gpu +100%: 5 Pods, 8 nvidia\.com\/gpu +200%: 10 Pods, 16 nvidia\.com\/gpu\n/);
    expect(r.stdout).toMatch(/ {2}1m00s {2}delete-old +— +100%: 5 Pods, 8 nvidia\.com\/gpu +100%: 5 Pods, 8 nvidia\.com\/gpu\n/);
    expect(r.stdout).toContain('peak 200% capacity, 10 Pods, 16 nvidia.com/gpu for 1m00s (0s to 1m00s)');
  });

  test('--json carries the same numbers, and why the strategy is the default', async () => {
    const r = await rayshiftIn(['plan', '--json', '-'], { stdin: gpuService() });
    const { plans, skipped } = JSON.parse(r.stdout) as { plans: { strategy: string; defaultStrategy: string; peak: object; footprint: { atSeconds: number; total: object }[] }[]; skipped: unknown[] };
    expect(skipped).toEqual([]);
    expect(plans[0].strategy).toBe('NewCluster');
    expect(plans[0].defaultStrategy).toContain('KubeRay v1.7.0 upgrades with NewCluster');
    expect(plans[0].peak).toEqual({
      capacityPercent: { value: 200, from: 0, until: 60, lasts: 60 },
      pods: { value: 10, from: 0, until: 60, lasts: 60 },
      accelerators: { 'nvidia.com/gpu': { value: 16, from: 0, until: 60, lasts: 60 } },
    });
    expect(plans[0].footprint.map((f) => [f.atSeconds, f.total])).toEqual([
      [0, { capacityPercent: 200, usage: { pods: 10, accelerators: { 'nvidia.com/gpu': 16 } } }],
      [0, { capacityPercent: 200, usage: { pods: 10, accelerators: { 'nvidia.com/gpu': 16 } } }],
      [60, { capacityPercent: 100, usage: { pods: 5, accelerators: { 'nvidia.com/gpu': 8 } } }],
    ]);
  });

  test("rayshift.dev/v1alpha1 without a strategy: the rayshift operator's NewCluster", async () => {
    const r = await rayshiftIn(['plan', '-'], { stdin: gpuService(undefined, 'rayshift.dev/v1alpha1') });
    expect(r.stdout.split('\n')[1]).toBe('  spec.upgradeStrategy.type is unset: the rayshift operator upgrades with NewCluster (a full second cluster until the switch)');
  });

  test('capacityPolicy shrinkFirst: validate warns what it trades; plan shows no surge (8 GPUs at most) and the dip to 75% served', async () => {
    const svc = parse(gpuService({ type: 'NewClusterWithIncrementalUpgrade', clusterUpgradeOptions: { maxSurgePercent: 25, stepSizePercent: 25, intervalSeconds: 10, gatewayClassName: 'traefik' } }, 'rayshift.dev/v1alpha1'));
    // The autoscaler turns a lower target_capacity into fewer workers (down to minReplicas 0): one worker of 2 GPUs per 25% step.
    svc.spec.rayClusterConfig.enableInTreeAutoscaling = true;
    svc.spec.rayClusterConfig.workerGroupSpecs[0].minReplicas = 0;
    svc.spec.rayshift = { capacityPolicy: 'shrinkFirst' };
    const v = await rayshiftIn(['validate', '-'], { stdin: stringify(svc) });
    expect(v.stdout + v.stderr).toContain('spec.rayshift.capacityPolicy: warning: "shrinkFirst" trades availability for accelerators');
    const r = await rayshiftIn(['plan', '-'], { stdin: stringify(svc) });
    expect(r.code).toBe(0);
    // The old cluster gives a worker back before the new one starts one: never more than 4 workers (8 GPUs) and the two heads together.
    expect(r.stdout).toContain('peak 100% capacity, 6 Pods, 8 nvidia.com/gpu');
    expect(r.stdout).toContain('dip to 75% served 4 times, 10s in all (0s to 40s): capacityPolicy shrinkFirst, if the surge does not fit');
    const json = JSON.parse((await rayshiftIn(['plan', '--json', '-'], { stdin: stringify(svc) })).stdout) as { plans: { dip: object; peakCapacityPercent: number }[] };
    expect(json.plans[0].dip).toEqual({ value: 75, from: 0, until: 40, lasts: 10, times: 4 });
    expect(json.plans[0].peakCapacityPercent).toBe(100);
  });

  test('None: no upgrade, said so', async () => {
    const r = await rayshiftIn(['plan', '-'], { stdin: gpuService({ type: 'None' }) });
    expect(r.stdout).toBe('RayService llm: None\n  no upgrade: changes to rayClusterConfig are not rolled out (the Serve config is still applied in place)\n');
  });
});

describe('RoleBasedGroup coordination', () => {
  test('a maxSkew below what any rollout can keep: validate warns with the bound, plan adds the skew it keeps', async () => {
    const input = yamlOf(group('pd'), policy('pd', '1%'));
    const v = await rayshiftIn(['validate', '-'], { stdin: input });
    // 7 and 3 replicas: the best single-replica order reaches |4/7 − 1/3| = 5/21 = 23.8%.
    expect(v.stdout).toBe(
      '<stdin>:2 CoordinatedPolicy/pd: spec.policies[0].strategy.rollingUpdate.maxSkew: warning: "1%" cannot hold for roles prefill (7 replicas), decode (3 replicas): updating one replica at a time, no rollout keeps the skew below 23.8%; `rayshift plan` shows the skew each round reaches\n' +
        'valid: 0 errors, 1 warning in 2 documents\n',
    );
    const p = await rayshiftIn(['plan', '-'], { stdin: input });
    expect(p.stdout).toContain('warning: maxSkew 1% cannot hold for roles of these sizes: updating one replica at a time, no rollout keeps the skew below 23.8%; this plan keeps it within 28.6%');
    // 7 + 3 one-GPU replicas, no surge: 10 Pods, 10 GPUs every round.
    expect(p.stdout).toMatch(/peak 10 Pods in (\d+) of \1 rounds \(from round 1\); 10 nvidia\.com\/gpu in \1 of \1 rounds/);
  });

  test('a maxSkew the roles can keep gives no warning', async () => {
    const v = await rayshiftIn(['validate', '-'], { stdin: yamlOf(group('pd'), policy('pd', '25%')) });
    expect(v.stdout).toBe('valid: 0 errors, 0 warnings in 2 documents\n');
  });

  test('a CoordinatedPolicy named after no group: validate warns with the groups there are, plan says what it skipped', async () => {
    const input = yamlOf(group('pd-inference'), policy('pd-rollout-policy', '25%'));
    const v = await rayshiftIn(['validate', '-'], { stdin: input });
    expect(v.stdout).toBe(
      '<stdin>:2 CoordinatedPolicy/pd-rollout-policy: metadata.name: warning: "pd-rollout-policy" names no RoleBasedGroup in namespace default among the validated files (RoleBasedGroups: pd-inference (namespace default)): RBG applies a CoordinatedPolicy only to the group of the same name and namespace, so this one coordinates nothing there\n' +
        'valid: 0 errors, 1 warning in 2 documents\n',
    );
    const p = await rayshiftIn(['plan', '-'], { stdin: input });
    expect(p.stdout).toBe(
      [
        'not planned',
        '  RoleBasedGroup pd-inference (namespace default): no CoordinatedPolicy named pd-inference in namespace default among the files and no rayshift.dev/coordination annotation: each role rolls out on its own rolloutStrategy, uncoordinated',
        '  CoordinatedPolicy pd-rollout-policy (namespace default): no RoleBasedGroup named pd-rollout-policy in namespace default among the files (groups: pd-inference (namespace default)); RBG applies a CoordinatedPolicy only to the group of the same name and namespace',
        '',
      ].join('\n'),
    );
  });

  test('an annotation rule naming a role the group lacks is an error', async () => {
    const annotation = JSON.stringify({ policies: [{ name: 'pd-rollout', roles: ['prefill', 'decoder'], strategy: { rollingUpdate: { maxSkew: '50%' } } }] });
    const v = await rayshiftIn(['validate', '-'], { stdin: yamlOf(group('pd', { annotations: { [COORDINATION_ANNOTATION]: annotation }, labels: { [EXECUTOR_LABEL]: 'operator' } })) });
    expect(v.code).toBe(1);
    expect(v.stdout).toContain(
      `<stdin>:1 RoleBasedGroup/pd: metadata.annotations["${COORDINATION_ANNOTATION}"].policies[0].roles[1]: "decoder" is not a role of this group, so rule "pd-rollout" does not coordinate it; roles: prefill, decode\n`,
    );
  });

  test('maxUnavailable 0 in a rule warns that RBG reads it as 1', async () => {
    const zero = policy('pd', '25%');
    (zero.spec.policies[0].strategy.rollingUpdate as { maxUnavailable: unknown }).maxUnavailable = 0;
    const v = await rayshiftIn(['validate', '-'], { stdin: yamlOf(group('pd'), zero) });
    expect(v.code).toBe(0);
    expect(v.stdout).toContain('spec.policies[0].strategy.rollingUpdate.maxUnavailable: warning: 0 does not keep every replica available');
  });
});
