/**
 * How often synthesis reports a finding: each warning once per construct per synthesis (cdk8s runs
 * the validation hooks 1 + charts times in `app.synth()`), and a RoleBasedGroup's rule problem once,
 * by the group, not again by the CoordinatedPolicy rendered from the same rules.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { App, Chart, Testing } from 'cdk8s';
import { CoordinatedPolicy, HttpRoute, RoleBasedGroup } from '../../lib/cdk8s';
import { RoleSpec } from '../../lib/spec';
import { captureStderr, synthError } from './helpers';

/** A route whose only backend has weight 0: valid, with the warning that every request fails. */
function darkRoute(chart: Chart): void {
  new HttpRoute(chart, 'dark', { metadata: { name: 'dark' }, parents: [{ name: 'inference' }], rules: [{ backendRefs: [{ name: 'svc', port: 8000, weight: 0 }] }] });
}

const DARK_WARNING = 'warning: HTTPRoute/dark: spec.rules[0].backendRefs: all weights are 0: every request this rule matches is answered with an error\n';

describe('each synthesis warning is printed once per construct per synthesis', () => {
  test('app.synth() over two charts prints each chart\'s warning once (cdk8s validates the app three times)', () => {
    const app = new App({ outdir: fs.mkdtempSync(path.join(os.tmpdir(), 'rayshift-synth-')) });
    darkRoute(new Chart(app, 'a', { namespace: 'a' }));
    darkRoute(new Chart(app, 'b', { namespace: 'b' }));
    const { stderr } = captureStderr(() => app.synth());
    expect(stderr).toBe(DARK_WARNING.repeat(2));
  });

  test('app.synthYaml() prints it once too', () => {
    const app = Testing.app();
    const chart = new Chart(app, 'a');
    darkRoute(chart);
    expect(captureStderr(() => app.synthYaml()).stderr).toBe(DARK_WARNING);
  });

  test('the next synthesis prints it again', async () => {
    const chart = new Chart(Testing.app(), 'a');
    darkRoute(chart);
    expect(captureStderr(() => Testing.synth(chart)).stderr).toBe(DARK_WARNING);
    await Promise.resolve(); // the first synthesis's run ends
    expect(captureStderr(() => Testing.synth(chart)).stderr).toBe(DARK_WARNING);
  });
});

describe('a RoleBasedGroup\'s rule problem is reported once, by the group', () => {
  const template = { spec: { containers: [{ name: 'x', image: 'lmsysorg/sglang:v0.5.5' }] } };
  const roles: RoleSpec[] = [
    { name: 'prefill', replicas: 4, template },
    { name: 'decode', replicas: 2, template },
    { name: 'router', replicas: 1, template },
  ];

  test('an error of a rule rendered into the CoordinatedPolicy is listed once, at the group\'s coordination', () => {
    const chart = new Chart(Testing.app(), 'c');
    new RoleBasedGroup(chart, 'pd', { metadata: { name: 'pd' }, roles, coordination: [{ name: 'r1', roles: ['prefill', 'decode'], rollingUpdate: { maxSkew: '5%', partition: '100%' } }] });
    const lines = synthError(chart).split('\n').slice(1).map((l) => l.trim());
    // "100%" of 4 and of 2 replicas keeps every replica of each role on the old revision.
    expect(lines).toEqual([
      '[c/pd] RoleBasedGroup/pd: spec.coordination[0].rollingUpdate.partition: "100%" keeps 4 of 4 replicas on the old revision of role "prefill"; must be below replicas (4)',
      '[c/pd] RoleBasedGroup/pd: spec.coordination[0].rollingUpdate.partition: "100%" keeps 2 of 2 replicas on the old revision of role "decode"; must be below replicas (2)',
    ]);
  });

  test('a warning of such a rule is printed once, by the group, not again by the CoordinatedPolicy', () => {
    const chart = new Chart(Testing.app(), 'c');
    new RoleBasedGroup(chart, 'pd', { metadata: { name: 'pd' }, roles, coordination: [{ name: 'solo', roles: ['router'], rollingUpdate: { maxSkew: '5%' } }] });
    const { stderr } = captureStderr(() => Testing.synth(chart));
    expect(stderr).toBe('warning: RoleBasedGroup/pd: spec.coordination[0].roles: names only "router": a rule over one role coordinates nothing and upstream ignores it\n');
  });

  test('a CoordinatedPolicy given its own rules reports their problems itself', () => {
    const chart = new Chart(Testing.app(), 'c');
    const group = new RoleBasedGroup(chart, 'pd', { metadata: { name: 'pd' }, roles });
    const policy = new CoordinatedPolicy(chart, 'policy', { group, rules: [{ name: 'r1', roles: ['prefill', 'decode'], rollingUpdate: { maxSkew: '5%', partition: '100%' } }] });
    expect(group.findings().errors).toEqual([]);
    expect(policy.findings().errors.map((e) => e.path)).toEqual(['spec.policies[0].strategy.rollingUpdate.partition', 'spec.policies[0].strategy.rollingUpdate.partition']);
  });
});
