/**
 * `rayshift validate` and `rayshift plan` on what users feed them, run in this process: JSON on
 * every outcome, files with nothing rayshift knows, mistyped apiVersions, standard input, the
 * warnings of `plan`, and RoleBasedGroups whose rollout the rayshift operator executes.
 */
import * as fs from 'node:fs';
import { fixture, rayshiftIn } from './cli-io';

interface JsonProblem {
  file: string;
  document: number;
  kind: string;
  name: string;
  path: string;
  message: string;
  severity: 'error' | 'warning';
}

const text = (name: string) => fs.readFileSync(fixture(name), 'utf8');

describe('--json is JSON on every outcome', () => {
  const broken = [fixture('missing.yaml'), fixture('not-yaml.yaml'), fixture('bad-alias.yaml'), fixture('unknown-kind.yaml'), fixture('warning-only.yaml'), fixture('good.yaml')];

  test('validate: a missing file, a document that is not YAML and an unknown kind are problems naming their file; the other files are still reported', async () => {
    const r = await rayshiftIn(['validate', '--json', ...broken]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('');
    const { problems } = JSON.parse(r.stdout) as { problems: JsonProblem[] };
    const byFile = (f: string) => problems.filter((p) => p.file === fixture(f));
    expect(byFile('missing.yaml')).toEqual([{ file: fixture('missing.yaml'), document: 0, kind: '', name: '', path: '', message: 'no such file', severity: 'error' }]);
    expect(byFile('not-yaml.yaml')).toEqual([expect.objectContaining({ document: 1, message: expect.stringMatching(/^is not valid YAML: .*line 3, column 1$/), severity: 'error' })]);
    expect(byFile('bad-alias.yaml')).toEqual([expect.objectContaining({ document: 1, message: expect.stringMatching(/^is not valid YAML: Unresolved alias.*undefined-anchor$/), severity: 'error' })]);
    expect(byFile('unknown-kind.yaml')).toEqual([expect.objectContaining({ kind: 'RayServce', name: 'typo', path: 'kind', severity: 'error' })]);
    // The files after the broken ones are reported exactly as on their own.
    const alone = JSON.parse((await rayshiftIn(['validate', '--json', fixture('warning-only.yaml'), fixture('good.yaml')])).stdout) as { problems: JsonProblem[] };
    expect(alone.problems).toHaveLength(1);
    expect(byFile('warning-only.yaml')).toEqual(alone.problems);
    expect(byFile('good.yaml')).toEqual([]);
    expect(problems).toHaveLength(5);
  });

  test('plan: invalid input prints {"plans":[],"skipped":[],"problems":[…]} on stdout, the same problems as validate, and exits 1', async () => {
    const validate = JSON.parse((await rayshiftIn(['validate', '--json', ...broken])).stdout) as { problems: JsonProblem[] };
    const r = await rayshiftIn(['plan', '--json', ...broken]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual({ plans: [], skipped: [], problems: validate.problems });
  });

  test('a usage error with --json is plain text on stderr with exit 2, as the help says', async () => {
    const r = await rayshiftIn(['validate', '--json']);
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toContain("error: missing required argument 'file'");
    for (const cmd of ['validate', 'plan']) {
      const help = await rayshiftIn([cmd, '--help']);
      expect(help.code).toBe(0);
      expect(help.stdout.replace(/\s+/g, ' ')).toContain('Usage errors (a missing argument, an unknown option) are still plain text on stderr, with exit status 2.');
    }
  });
});

describe('input rayshift does not know is reported', () => {
  test('a file with only a ConfigMap is a warning naming the file, not a silent "0 errors"', async () => {
    const r = await rayshiftIn(['validate', fixture('configmap-only.yaml')]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      `${fixture('configmap-only.yaml')}: warning: holds no object rayshift validates (only v1/ConfigMap): nothing was checked\nvalid: 0 errors, 1 warning in 0 documents (1 of other kinds skipped)\n`,
    );
  });

  test('an empty input is a warning too', async () => {
    const r = await rayshiftIn(['validate', '-'], { stdin: '# nothing yet\n' });
    expect(r.stdout).toBe('<stdin>: warning: holds no Kubernetes object: nothing was checked\nvalid: 0 errors, 1 warning in 0 documents\n');
  });

  test('a mistyped apiVersion names it and the versions rayshift knows for the kind; a known kind in another group is a warning', async () => {
    const r = await rayshiftIn(['validate', fixture('mistyped-versions.yaml')]);
    const f = fixture('mistyped-versions.yaml');
    expect(r.code).toBe(1);
    expect(r.stdout.split('\n').filter(Boolean)).toEqual([
      `${f}:1 RayService/old: apiVersion: ray.io/v1beta1 is not a version of RayService rayshift validates; known: ray.io/v1, rayshift.dev/v1alpha1`,
      `${f}:2 Gateway/gw: apiVersion: gateway.networking.k8s.io/v1beta2 is not a version of Gateway rayshift validates; known: gateway.networking.k8s.io/v1, gateway.networking.k8s.io/v1beta1`,
      `${f}:3 RayService/llm: apiVersion: rayshift.dev/v1 is not a version of RayService rayshift validates; known: ray.io/v1, rayshift.dev/v1alpha1`,
      `${f}:4 RayService/elsewhere: apiVersion: warning: rayshift.io/v1alpha1 is not an API group rayshift validates, so this RayService was not checked; rayshift validates RayService in ray.io/v1, rayshift.dev/v1alpha1`,
      'invalid: 3 errors, 1 warning in 3 documents (1 of other kinds skipped)',
    ]);
    expect(r.stderr).toBe('');
  });

  test('a document without apiVersion says it is required and where rayshift knows its kind', async () => {
    const r = await rayshiftIn(['validate', '--json', '-'], { stdin: 'kind: HTTPRoute\nmetadata: {name: r}\n' });
    expect((JSON.parse(r.stdout) as { problems: JsonProblem[] }).problems).toEqual([
      { file: '<stdin>', document: 1, kind: 'HTTPRoute', name: 'r', path: 'apiVersion', message: 'is required; rayshift validates HTTPRoute in gateway.networking.k8s.io/v1, gateway.networking.k8s.io/v1beta1', severity: 'error' },
    ]);
  });
});

describe('- reads standard input', () => {
  test('validate - checks the documents piped in, and problems name <stdin>', async () => {
    expect(await rayshiftIn(['validate', '-'], { stdin: text('good.yaml') })).toEqual({ code: 0, stdout: 'valid: 0 errors, 0 warnings in 3 documents\n', stderr: '' });
    const bad = await rayshiftIn(['validate', '-', fixture('warning-only.yaml')], { stdin: text('bad-rayservice.yaml') });
    expect(bad.code).toBe(1);
    const lines = bad.stdout.split('\n').filter(Boolean);
    expect(lines).toHaveLength(6);
    expect(lines[5]).toBe('invalid: 4 errors, 1 warning in 2 documents');
    expect(lines.slice(0, 4).every((l) => l.startsWith('<stdin>:1 RayService/llm: spec.'))).toBe(true);
    expect(lines[4]).toMatch(/warning-only\.yaml:1 HTTPRoute\/dark: /);
  });

  test('plan - plans what a file with the same text plans', async () => {
    const piped = await rayshiftIn(['plan', '--json', '-'], { stdin: text('good.yaml') });
    const file = await rayshiftIn(['plan', '--json', fixture('good.yaml')]);
    expect(piped.code).toBe(0);
    expect(JSON.parse(piped.stdout).plans).toHaveLength(2);
    expect(JSON.parse(piped.stdout)).toEqual(JSON.parse(file.stdout));
  });

  test('standard input that cannot be read is a problem of <stdin>', async () => {
    const r = await rayshiftIn(['validate', '--json', '-', fixture('good.yaml')]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).problems).toEqual([{ file: '<stdin>', document: 0, kind: '', name: '', path: '', message: 'cannot read: no standard input in this test', severity: 'error' }]);
  });
});

describe('plan shows the warnings of its input', () => {
  const warning = 'HTTPRoute/dark: spec.rules[0].backendRefs: warning: all weights are 0: every request this rule matches is answered with an error';

  test('as text: on stderr, with the plan on stdout', async () => {
    const r = await rayshiftIn(['plan', fixture('warning-only.yaml'), fixture('good.yaml')]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(`${fixture('warning-only.yaml')}:1 ${warning}\n`);
    expect(r.stdout).toContain('RayService fruit: NewClusterWithIncrementalUpgrade');
  });

  test('with --json: in "problems" next to "plans"', async () => {
    const r = await rayshiftIn(['plan', '--json', fixture('warning-only.yaml'), fixture('good.yaml')]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { plans: unknown[]; problems: JsonProblem[] };
    expect(out.plans).toHaveLength(2);
    expect(out.problems).toEqual([expect.objectContaining({ file: fixture('warning-only.yaml'), kind: 'HTTPRoute', name: 'dark', severity: 'warning' })]);
  });
});

describe('RoleBasedGroups whose rollout a rayshift executor runs (rayshift.dev/coordination)', () => {
  test('validate reports what the operator would reject in the annotation, and an annotation nothing reads', async () => {
    const f = fixture('rbg-operator-bad.yaml');
    const r = await rayshiftIn(['validate', f]);
    expect(r.code).toBe(1);
    expect(r.stdout.split('\n').filter(Boolean)).toEqual([
      `${f}:1 RoleBasedGroup/pd: metadata.annotations: annotation rayshift.dev/coordination: spec.policies[0].strategy.rollingUpdate.partition: "150%" is outside "0%"–"100%"; spec.policies[0].progressDeadlineSeconds: must be an integer ≥ 1 (seconds); got 0`,
      `${f}:2 RoleBasedGroup/unlabelled: metadata.labels: warning: annotation rayshift.dev/coordination is read only by a rayshift executor, but label rayshift.dev/coordination-executor is unset, not operator or pulumi: nothing enforces these rules`,
      'invalid: 1 error, 1 warning in 2 documents',
    ]);
    const notJson = await rayshiftIn(['validate', '-'], { stdin: text('rbg-operator.yaml').replace(/rayshift\.dev\/coordination: '.*'/, "rayshift.dev/coordination: 'policies: []'") });
    expect(notJson.code).toBe(1);
    expect(notJson.stdout).toMatch(/^<stdin>:1 RoleBasedGroup\/pd: metadata\.annotations: annotation rayshift\.dev\/coordination is not JSON: /);
  });

  test('valid rules pass and plan rayshift\'s rounds; the same rules in a CoordinatedPolicy plan RBG\'s controller, which releases every replica first', async () => {
    expect(await rayshiftIn(['validate', fixture('rbg-operator.yaml')])).toEqual({ code: 0, stdout: 'valid: 0 errors, 0 warnings in 1 document\n', stderr: '' });
    const r = await rayshiftIn(['plan', '--json', fixture('rbg-operator.yaml')]);
    expect(r.code).toBe(0);
    const { plans } = JSON.parse(r.stdout) as { plans: { kind: string; name: string; rule: string; rounds: { updated: Record<string, number> }[]; complete: boolean }[] };
    expect(plans).toHaveLength(1);
    expect(plans[0]).toMatchObject({ kind: 'RoleBasedGroup', name: 'pd', rule: 'pd-rollout', complete: true });
    expect(plans[0].rounds).toHaveLength(8); // 40 prefill / 20 decode at 10%: docs/rbg-coordination.md
    expect(plans[0].rounds[7].updated).toEqual({ prefill: 40, decode: 20 });
    const asPolicy = text('rbg-operator.yaml')
      .replace(/ {2}labels:\n.*\n {2}annotations:\n.*\n/, '')
      .concat('---\napiVersion: workloads.x-k8s.io/v1alpha2\nkind: CoordinatedPolicy\nmetadata: {name: pd}\n')
      .concat('spec: {policies: [{name: pd-rollout, roles: [prefill, decode], strategy: {rollingUpdate: {maxSkew: "10%", maxUnavailable: "10%"}}}]}\n');
    const policy = JSON.parse((await rayshiftIn(['plan', '--json', '-'], { stdin: asPolicy })).stdout) as { plans: { coordination: string; rounds: { partition: Record<string, number> }[]; complete: boolean }[] };
    expect(plans[0]).toMatchObject({ coordination: 'parallel' });
    expect(policy.plans).toHaveLength(1);
    expect(policy.plans[0]).toMatchObject({ kind: 'RoleBasedGroup', name: 'pd', rule: 'pd-rollout', coordination: 'controller', complete: true });
    expect(policy.plans[0].rounds[0].partition).toEqual({ prefill: 0, decode: 0 });
  });

  test('invalid rules: plan prints the problem and plans nothing', async () => {
    const r = await rayshiftIn(['plan', fixture('rbg-operator-bad.yaml')]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('RoleBasedGroup/pd: metadata.annotations: annotation rayshift.dev/coordination: ');
    expect(r.stderr).toMatch(/invalid: 1 error, 1 warning in 2 documents; no plan\n$/);
  });
});

test('the round table of a RoleBasedGroup plan keeps long role names apart and its columns aligned', async () => {
  const r = await rayshiftIn(['plan', fixture('rbg-operator.yaml')]);
  const [heading, ...rows] = r.stdout.split('\n').slice(1, 9);
  expect(heading).toBe('  round    prefill updated/partition · Pods  decode updated/partition · Pods  all roles');
  for (const row of rows) expect(row).toHaveLength(heading.length);
  // 40 prefill and 20 decode replicas of one Pod each, no surge: 40, 20 and 60 Pods every round.
  expect(rows[0]).toBe('      1                         6 / 34 · 40                      3 / 17 · 20  60 Pods  ');
});

describe('--rbg-version adds a release\'s own rules', () => {
  const group = [
    'apiVersion: workloads.x-k8s.io/v1alpha2',
    'kind: RoleBasedGroup',
    'metadata: { name: pd }',
    'spec:',
    '  roles:',
    '    - name: prefill',
    '      replicas: 5',
    '      rolloutStrategy: { rollingUpdate: { maxUnavailable: "10%" } }',
    '      standalonePattern: { template: { spec: { containers: [{ name: p, image: sglang }] } } }',
  ].join('\n');

  test('validate: "10%" of 5 replicas passes the rules every release shares, and fails RBG v0.8\'s webhook rule', async () => {
    const shared = await rayshiftIn(['validate', '--json', '-'], { stdin: group });
    expect(JSON.parse(shared.stdout).problems.filter((p: JsonProblem) => p.severity === 'error')).toEqual([]);
    const v08 = await rayshiftIn(['validate', '--json', '--rbg-version', 'v0.8', '-'], { stdin: group });
    expect(v08.code).toBe(1);
    expect(JSON.parse(v08.stdout).problems).toContainEqual(expect.objectContaining({ kind: 'RoleBasedGroup', name: 'pd', severity: 'error', message: expect.stringContaining("RBG v0.8's webhook rejects both 0") }));
  });

  test('an unknown release is a usage error naming the releases', async () => {
    const bad = await rayshiftIn(['validate', '--rbg-version', 'v9', '-'], { stdin: group });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/v0\.6, v0\.7, v0\.8/);
  });
});

describe('one line per problem', () => {
  const f = fixture('bad-policy.yaml');

  test('a file named twice is read once: the same problems and the same summary as named once', async () => {
    const once = await rayshiftIn(['validate', f]);
    const twice = await rayshiftIn(['validate', f, f]);
    expect(twice).toEqual(once);
    expect(once.stdout).toMatch(/^invalid: \d+ errors, \d+ warnings in 2 documents$/m);
  });

  test('a role named twice in a CoordinatedPolicy rule is reported once per problem', async () => {
    // bad-policy.yaml's rule with "decode" named twice: decode sets its own partition, and "100%" keeps all of its replicas.
    const stdin = text('bad-policy.yaml').replace('roles: [prefill, decode, router]', 'roles: [prefill, decode, decode]').replace('maxSkew: 5, partition: "150%"', 'maxSkew: "5%", partition: "100%"');
    const r = await rayshiftIn(['validate', '-'], { stdin });
    expect(r.code).toBe(1);
    const lines = r.stdout.split('\n').filter(Boolean);
    expect(new Set(lines).size).toBe(lines.length);
    expect(lines.filter((l) => l.includes('role "decode" also sets its own rolling-update partition'))).toHaveLength(1);
    expect(lines.filter((l) => l.endsWith('"100%" keeps 2 of 2 replicas on the old revision of role "decode"; must be below replicas (2)'))).toHaveLength(1);
  });
});
