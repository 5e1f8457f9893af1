/**
 * The built `rayshift` binary on YAML files: exact exit codes and messages. `npm test` builds
 * first; these tests run `bin/rayshift.js` as a user would.
 */
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { App } from 'cdk8s';
import { buildExamples } from '../../examples/main';
import { requireFreshBuild, root } from './built';

const bin = path.join(root, 'bin', 'rayshift.js');
const fixture = (name: string) => path.join('test', 'cli', 'fixtures', name);

function rayshift(...args: string[]): { code: number; stdout: string; stderr: string } {
  return rayshiftWithInput('', ...args);
}

function rayshiftWithInput(input: string, ...args: string[]): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: root, encoding: 'utf8', input, env: { ...process.env, NO_COLOR: '1' } });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

beforeAll(requireFreshBuild);

describe('rayshift validate', () => {
  test('valid documents exit 0 and say so on stdout', () => {
    const r = rayshift('validate', fixture('good.yaml'));
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('valid: 0 errors, 0 warnings in 3 documents\n');
    expect(r.stderr).toBe('');
  });

  test('every invalid option is printed as FILE:DOC KIND/NAME: PATH: MESSAGE and the exit code is 1', () => {
    const r = rayshift('validate', fixture('bad-rayservice.yaml'));
    expect(r.code).toBe(1);
    const f = fixture('bad-rayservice.yaml');
    expect(r.stdout.split('\n').filter(Boolean).slice(0, -1)).toEqual([
      `${f}:1 RayService/llm: spec.upgradeStrategy.clusterUpgradeOptions.maxSurgePercent: must be an integer from 1 to 100; got 0 (0 never adds capacity, so the upgrade would stall forever)`,
      `${f}:1 RayService/llm: spec.upgradeStrategy.clusterUpgradeOptions.intervalSeconds: must be an integer from 1 to 2147483647 (int32); got 0`,
      `${f}:1 RayService/llm: spec.upgradeStrategy.clusterUpgradeOptions.gatewayClassName: "Not_A_Class" is not a DNS-1123 subdomain: use lowercase letters, digits, '-' and '.', and start and end each part with a letter or digit`,
      `${f}:1 RayService/llm: spec.rayClusterDeletionDelaySeconds: must be an integer from 0 to 2147483647 (int32); got -1`,
    ]);
    expect(r.stdout.split('\n').filter(Boolean).at(-1)).toBe('invalid: 4 errors, 0 warnings in 1 document');
    expect(r.stderr).toBe('');
  });

  test('a CoordinatedPolicy is checked against the RoleBasedGroup of the same name', () => {
    const r = rayshift('validate', fixture('bad-policy.yaml'));
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('bad-policy.yaml:2 CoordinatedPolicy/pd: spec.policies[0].roles[2]: "router" is not a role of this group; roles: prefill, decode');
    expect(r.stdout).toContain('spec.policies[0].strategy.rollingUpdate.maxSkew: must be a percent string such as "10%"; got the integer 5');
    expect(r.stdout).toContain('spec.policies[0].strategy.rollingUpdate.partition: "150%" is outside "0%"–"100%"');
    expect(r.stdout).toContain('role "decode" also sets its own rolling-update partition');
  });

  test('a missing file is an error on the file, exit 1', () => {
    const r = rayshift('validate', 'missing.yaml');
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('missing.yaml: no such file\ninvalid: 1 error, 0 warnings in 0 documents\n');
  });

  test('a file that is not YAML names the document and the parse error, exit 1', () => {
    const r = rayshift('validate', fixture('not-yaml.yaml'));
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^test\/cli\/fixtures\/not-yaml\.yaml:1: is not valid YAML: .*line 3, column 1\ninvalid: 1 error, 0 warnings in 0 documents\n$/);
  });

  test('an unknown kind in one of rayshift\'s API groups (a typo) is an error that lists the known kinds, exit 1', () => {
    const r = rayshift('validate', fixture('unknown-kind.yaml'));
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('unknown-kind.yaml:1 RayServce/typo: kind: ray.io/v1/RayServce is not a kind rayshift validates; known: ray.io/v1/RayService');
  });

  test('documents of other API groups (Deployments, Namespaces…) are skipped and counted; a file of nothing else is a warning', () => {
    const r = rayshift('validate', fixture('foreign-kinds.yaml'), fixture('good.yaml'));
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      `${fixture('foreign-kinds.yaml')}: warning: holds no object rayshift validates (only apps/v1/Deployment, v1/Namespace): nothing was checked\nvalid: 0 errors, 1 warning in 3 documents (2 of other kinds skipped)\n`,
    );
    expect(r.stderr).toBe('');
  });

  test('- reads the documents piped to standard input, named <stdin>', () => {
    expect(rayshiftWithInput(fs.readFileSync(path.join(root, fixture('good.yaml')), 'utf8'), 'validate', '-')).toEqual({ code: 0, stdout: 'valid: 0 errors, 0 warnings in 3 documents\n', stderr: '' });
    const r = rayshiftWithInput(fs.readFileSync(path.join(root, fixture('unknown-kind.yaml')), 'utf8'), 'plan', '-');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('<stdin>:1 RayServce/typo: kind: ray.io/v1/RayServce is not a kind rayshift validates');
  });

  test('warnings alone exit 0', () => {
    const r = rayshift('validate', fixture('warning-only.yaml'));
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      'test/cli/fixtures/warning-only.yaml:1 HTTPRoute/dark: spec.rules[0].backendRefs: warning: all weights are 0: every request this rule matches is answered with an error\nvalid: 0 errors, 1 warning in 1 document\n',
    );
  });

  test('--json prints every problem with file, document, kind, name, path, message and severity', () => {
    const r = rayshift('validate', '--json', fixture('bad-rayservice.yaml'), fixture('warning-only.yaml'));
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout) as { problems: Record<string, unknown>[] };
    expect(out.problems).toHaveLength(5);
    expect(out.problems[0]).toEqual({
      file: fixture('bad-rayservice.yaml'),
      document: 1,
      kind: 'RayService',
      name: 'llm',
      path: 'spec.upgradeStrategy.clusterUpgradeOptions.maxSurgePercent',
      message: 'must be an integer from 1 to 100; got 0 (0 never adds capacity, so the upgrade would stall forever)',
      severity: 'error',
    });
    expect(out.problems[4]).toMatchObject({ kind: 'HTTPRoute', severity: 'warning' });
  });

  test('the synthesized examples validate', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rayshift-cli-'));
    buildExamples(new App({ outdir: dir })).synth();
    const files = fs.readdirSync(dir).map((f) => path.join(dir, f));
    const r = rayshift('validate', ...files);
    // The routed example's ServiceAccount, Role, RoleBinding, Deployment and Service are kinds rayshift does not check;
    // the one warning is shrinkFirst's trade of availability for accelerators (examples/shrink-first.ts), which it always states.
    expect(r.stdout).toMatch(/^\S+shrink-first\.k8s\.yaml:1 RayService\/llm: spec\.rayshift\.capacityPolicy: warning: "shrinkFirst" trades availability for accelerators: [^\n]+\nvalid: 0 errors, 1 warning in \d+ documents \(5 of other kinds skipped\)\n$/);
    expect(r.code).toBe(0);
  });
});

describe('rayshift plan', () => {
  test('--json gives the documented shape: the worked example maxSurge 30 / step 10', () => {
    const r = rayshift('plan', '--json', fixture('good.yaml'));
    expect(r.code).toBe(0);
    const { plans } = JSON.parse(r.stdout) as { plans: Record<string, unknown>[] };
    const svc = plans.find((p) => p.kind === 'RayService') as { name: string; strategy: string; steps: Record<string, unknown>[]; durationSeconds: number; peakCapacityPercent: number };
    expect(svc.name).toBe('fruit');
    expect(svc.strategy).toBe('NewClusterWithIncrementalUpgrade');
    expect(Object.keys(svc.steps[0]).sort()).toEqual(
      ['action', 'activeTargetCapacity', 'activeWeight', 'atSeconds', 'pendingTargetCapacity', 'pendingWeight'].sort(),
    );
    const seq = svc.steps.map((s) => `${s.action}:${s.activeTargetCapacity}/${s.pendingTargetCapacity}:${s.activeWeight}/${s.pendingWeight}`);
    expect(seq.slice(0, 6)).toEqual([
      'scale-pending:100/30:100/0',
      'shift-traffic:100/30:90/10',
      'shift-traffic:100/30:80/20',
      'shift-traffic:100/30:70/30',
      'scale-active:70/30:70/30',
      'scale-pending:70/60:70/30',
    ]);
    expect(svc.steps[svc.steps.length - 1].action).toBe('promote');
    expect(svc.peakCapacityPercent).toBe(130);
    expect(svc.durationSeconds).toBeGreaterThan(0);
    const rbg = plans.find((p) => p.kind === 'RoleBasedGroup') as { name: string; coordination: string; rounds: { updated: Record<string, number>; partition: Record<string, number> }[]; maxSkewPercentObserved: number };
    expect(rbg.name).toBe('pd');
    // Its CoordinatedPolicy is run by RBG's controller, whose first round releases every replica.
    expect(rbg.coordination).toBe('controller');
    expect(rbg.rounds[0].partition).toEqual({ prefill: 0, decode: 0 });
    expect(rbg.rounds[rbg.rounds.length - 1].updated).toEqual({ prefill: 7, decode: 3 });
    for (const round of rbg.rounds) expect(round.updated.prefill).toBeLessThanOrEqual(7 - round.partition.prefill);
    expect(typeof rbg.maxSkewPercentObserved).toBe('number');
  });

  test('human output has the step table, the weight chart, duration and the peak', () => {
    const r = rayshift('plan', fixture('good.yaml'));
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('RayService fruit: NewClusterWithIncrementalUpgrade');
    expect(r.stdout).toMatch(/shift-traffic\s+100% \/ 90%\s+30% \/ 10%/);
    expect(r.stdout).toContain('weight %');
    expect(r.stdout).toMatch(/steps\), outcome promoted\npeak 130% capacity/);
    expect(r.stdout).toContain('RoleBasedGroup pd (rule pd-rollout)');
    expect(r.stdout).toContain("run by RBG's controller: its first round releases every replica above the user's partition");
    expect(r.stdout).not.toMatch(/\u001b\[/); // no colour off a TTY
  });

  test('invalid input prints the validate messages, exits 1 and plans nothing', () => {
    const r = rayshift('plan', fixture('bad-rayservice.yaml'));
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('spec.upgradeStrategy.clusterUpgradeOptions.maxSurgePercent: must be an integer from 1 to 100; got 0');
    expect(r.stderr).toContain('; no plan');
  });
});

describe('usage', () => {
  test('an unknown command exits 2 with help', () => {
    const r = rayshift('bogus');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("error: unknown command 'bogus'");
  });

  test('a missing argument exits 2', () => {
    const r = rayshift('validate');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("error: missing required argument 'file'");
  });

  test('--help of each command exits 0 and describes it', () => {
    for (const cmd of ['validate', 'plan']) {
      const r = rayshift(cmd, '--help');
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`Usage: rayshift ${cmd} [options] <file...>`);
      expect(r.stdout).toContain('Exit status');
    }
  });
});

/**
 * Runs the built CLI with standard output a pipe whose reader is gone, as after `rayshift … | head -1`
 * once head has exited. sh waits for a line on stdin before it starts the CLI, and the line is sent
 * only once the read end is closed, so every write of the CLI to stdout meets EPIPE.
 */
function rayshiftIntoClosedPipe(...args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', 'read go && exec "$@"', 'sh', process.execPath, bin, ...args], { cwd: root, env: { ...process.env, NO_COLOR: '1' } });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (t: string) => (stderr += t));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
    child.stdout.on('close', () => child.stdin.end('go\n'));
    child.stdout.destroy();
  });
}

describe('as a Unix tool', () => {
  test('a closed stdout (| head) ends the CLI quietly with the exit status the command decided', async () => {
    expect(await rayshiftIntoClosedPipe('--help')).toEqual({ code: 0, stderr: '' });
    expect(await rayshiftIntoClosedPipe('validate', fixture('bad-rayservice.yaml'))).toEqual({ code: 1, stderr: '' });
    // plan writes its input's problems to stderr, which stays open: they are all it writes there, as with a reader.
    for (const file of ['good.yaml', 'bad-rayservice.yaml']) {
      const read = rayshift('plan', fixture(file));
      expect(await rayshiftIntoClosedPipe('plan', fixture(file))).toEqual({ code: read.code, stderr: read.stderr });
    }
  });

  test('the exit statuses are in the top-level --help', () => {
    const help = rayshift('--help').stdout.replace(/\s+/g, ' ');
    expect(help).toContain('Exit status of every command: 0 on success, 1 when the input is invalid or the command fails, 2 on a usage error');
  });
});

describe('--api-server', () => {
  test('API-server options without --api-server, or with --kubeconfig, are usage errors (exit 2)', () => {
    expect(rayshift('status', 'llm', '--token', 'secret-token')).toMatchObject({ code: 2, stderr: 'error: --token needs --api-server\n' });
    const both = rayshift('pause', 'llm', '--api-server', 'https://127.0.0.1:1', '--kubeconfig', 'kc.yaml');
    expect(both).toMatchObject({ code: 2, stderr: 'error: --kubeconfig and --api-server exclude each other\n' });
    expect(rayshift('rollback', 'llm')).toMatchObject({ code: 2, stderr: "error: rollback goes through the API server, which recovers the serving cluster's spec: give --api-server\n" });
    expect(rayshift('status', 'rbg/pd', '--api-server', 'https://127.0.0.1:1').code).toBe(2);
  });

  test('an unreachable API server is named, exit 1, and the token never shows', () => {
    const r = rayshift('status', 'llm', '-n', 'serving', '--api-server', 'http://127.0.0.1:1', '--token', 'secret-token');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: the API server http:\/\/127\.0\.0\.1:1 is unavailable: /);
    expect(`${r.stdout}${r.stderr}`).not.toContain('secret-token');
  });

  test('--help of the RayService verbs lists the API-server options', () => {
    for (const cmd of ['status', 'pause', 'resume', 'promote', 'abort', 'rollback', 'retry-analysis', 'skip-analysis']) {
      const r = rayshift(cmd, '--help');
      expect(r.code).toBe(0);
      for (const option of ['--api-server <url>', '--token <token>', '--token-file <path>', '--ca-file <path>', '--insecure-skip-tls-verify']) expect(r.stdout).toContain(option);
    }
  });
});
