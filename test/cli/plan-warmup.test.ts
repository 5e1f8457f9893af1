/** `rayshift plan` and `validate` on RoleBasedGroups with a rollout warmup (RBG v0.8): the warmup is the first stage. */
import { Chart, Testing } from 'cdk8s';
import { stringify } from 'yaml';
import { RoleBasedGroup, RoleBasedGroupProps } from '../../lib/cdk8s';
import { captureStderr } from '../cdk8s/helpers';
import { rayshiftIn } from './cli-io';

const template = (image: string) => ({ spec: { containers: [{ name: 'engine', image }] } });

/** The YAML the construct synthesizes for a v0.8 group with a warmup. */
function yamlOf(props: Partial<RoleBasedGroupProps>): string {
  const chart = new Chart(Testing.app(), 'c', { namespace: 'pd' });
  new RoleBasedGroup(chart, 'pd', {
    metadata: { name: 'pd' },
    rbgVersion: 'v0.8',
    roles: [
      { name: 'prefill', replicas: 4, template: template('sglang:v2') },
      { name: 'decode', replicas: 2, template: template('sglang:v2') },
    ],
    coordination: [{ name: 'pd-rollout', roles: ['prefill', 'decode'], rollingUpdate: { maxSkew: '50%' } }],
    ...props,
  });
  // Executor rbg with a warmup warns that RBG does not wait for it; the construct tests check that.
  return captureStderr(() => Testing.synth(chart)).result.map((m) => stringify(m)).join('---\n');
}

test('with a rayshift executor, plan shows the warmup as stage 1 before the rounds, as text and in JSON', async () => {
  const input = yamlOf({ executor: 'operator', warmup: { parallelism: 2, onFailure: 'Proceed' } });
  const text = await rayshiftIn(['plan', '-'], { stdin: input });
  expect(text.code).toBe(0);
  const lines = text.stdout.split('\n');
  expect(lines.slice(0, 6)).toEqual([
    "RoleBasedGroup pd: stage 1, warm the new images on the roles' nodes before the first round",
    '  prefill: sglang:v2',
    '  decode: sglang:v2',
    '  2 node(s) at a time; 2 retries per node; fails beyond 0 failed node(s) or after 15m00s',
    '  on failure: the rounds below run on cold nodes',
    '  stage 2, the rounds, starts when the warmup completes',
  ]);
  expect(lines[6]).toBe('RoleBasedGroup pd (rule pd-rollout): coordinated rolling update');

  const json = await rayshiftIn(['plan', '--json', '-'], { stdin: input });
  const { plans } = JSON.parse(json.stdout) as { plans: { rule: string; warmup?: unknown; rounds: unknown[] }[] };
  expect(plans).toHaveLength(1);
  expect(plans[0].warmup).toEqual({ images: { prefill: ['sglang:v2'], decode: ['sglang:v2'] }, parallelism: 2, backoffLimitPerNode: 2, maxFailedNodes: 0, timeoutSeconds: 900, onFailure: 'Proceed', gated: true });
  expect(plans[0].rounds.length).toBeGreaterThan(0);
});

test('without a warmup the plan has no stage 1; with executor rbg the Warmup object validates and plan has no gated stage', async () => {
  const none = await rayshiftIn(['plan', '--json', '-'], { stdin: yamlOf({ executor: 'operator' }) });
  expect((JSON.parse(none.stdout) as { plans: object[] }).plans.map((p) => 'warmup' in p)).toEqual([false]);

  const rbg = await rayshiftIn(['validate', '--rbg-version', 'v0.8', '-'], { stdin: yamlOf({ warmup: {} }) });
  expect([rbg.code, rbg.stdout]).toEqual([0, 'valid: 0 errors, 0 warnings in 3 documents\n']);
  const v07 = await rayshiftIn(['validate', '--rbg-version', 'v0.7', '-'], { stdin: yamlOf({ warmup: {} }) });
  expect(v07.code).toBe(1);
  expect(v07.stdout).toMatch(/RoleBasedGroupWarmup\/pd-warmup-[0-9a-f]{8}: rbgVersion: rbgVersion "v0\.7" has no RoleBasedGroupWarmup CRD/);
});

test('an invalid warmup in the coordination annotation is reported by validate and plans nothing', async () => {
  const input = yamlOf({ executor: 'operator', warmup: {} }).replace('"maxFailedNodes":0', '"maxFailedNodes":-1');
  expect(input).toContain('"maxFailedNodes":-1');
  const r = await rayshiftIn(['plan', '-'], { stdin: input });
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(/metadata\.annotations: annotation rayshift\.dev\/coordination: warmup\.maxFailedNodes: must be an integer from 0 to 2147483647 \(failed nodes tolerated\); got -1/);
});
