/** `rayshift plan` and `validate` of a group whose coordination annotation routes prefill and decode by release (`router`). */
import { rayshiftIn } from './cli-io';

const group = (router: object) => `apiVersion: workloads.x-k8s.io/v1alpha2
kind: RoleBasedGroup
metadata:
  name: pd
  labels:
    rayshift.dev/coordination-executor: operator
  annotations:
    rayshift.dev/coordination: '${JSON.stringify({ policies: [{ name: 'pd-rollout', roles: ['prefill', 'decode'], strategy: { rollingUpdate: { maxSkew: '10%' } }, router }] })}'
spec:
  roles:
    - name: prefill
      replicas: 5
      standalonePattern: { template: { spec: { containers: [{ name: p, image: sglang }] } } }
    - name: decode
      replicas: 3
      standalonePattern: { template: { spec: { containers: [{ name: d, image: sglang }] } } }
`;

test('plan shows the new release\'s route weight after each round, and 0 through the rollback', async () => {
  const r = await rayshiftIn(['plan', '--fail-at-round', '2', '-'], { stdin: group({ kind: 'sglang', image: 'lmsysorg/sglang:v0.5.5', gateway: { name: 'inference' } }) });
  expect(r.code).toBe(0);
  const rows = r.stdout.split('\n').filter((l) => /^\s+\d+\s/.test(l)).map((l) => l.trim().split(/\s+/).join(' '));
  expect(rows).toEqual([
    '1 2 / 3 · 5 1 / 2 · 3 8 Pods 33',
    '2 3 / 2 · 5 2 / 1 · 3 8 Pods 60',
    // The route hold: the last old prefill and decode stay until the route has left the old release.
    '3 4 / 1 · 5 2 / 1 · 3 8 Pods 100 prefill, decode keep their last old replica until the route leaves the old release',
    '4 5 / 0 · 5 3 / 0 · 3 8 Pods 100',
    '1 2 / 3 1 / 2 0',
    '2 1 / 4 0 / 3 0',
    '3 0 / 5 0 / 3 0',
  ]);
  expect(r.stdout).toContain('the route sends the abandoned release nothing (new weight 0) before the first rollback round');
  expect(r.stdout).toContain("then the old release's router Deployment is scaled to 0 replicas, once the route sends it 0");
});

test('validate names a bad router in the annotation by its path', async () => {
  const r = await rayshiftIn(['validate', '-'], { stdin: group({ kind: 'sglang', image: 'x', gateway: { name: 'inference' }, decode: 'kv' }) });
  expect(r.code).not.toBe(0);
  expect(r.stdout + r.stderr).toContain('spec.policies[0].router.decode: "kv" is not a role of this rule; allowed: "prefill", "decode"');
});
