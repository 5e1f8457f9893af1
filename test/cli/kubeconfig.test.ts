/**
 * Without a Kubernetes configuration, `rayshift status` and the steering verbs say where they looked
 * ($KUBECONFIG, ~/.kube/config, in-cluster) and how to give one, instead of client-node's
 * "HTTP protocol is not allowed when skipTLSVerify is not set".
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describeMissingKubeconfig } from '../../lib/cli/status-command';
import { SERVICE_ACCOUNT_DIR, lookUpKubeconfig } from '../../lib/runtime/kube/kubeconfig-lookup';
import { rayshiftIn } from './cli-io';

let dir: string;
let home: string;
let serviceAccountDir: string;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rayshift-kubeconfig-'));
  home = path.join(dir, 'home');
  serviceAccountDir = path.join(dir, 'sa');
  fs.mkdirSync(home);
  fs.mkdirSync(serviceAccountDir);
});

afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const write = (file: string) => {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, 'apiVersion: v1\nkind: Config\n');
  return file;
};

describe('lookUpKubeconfig follows client-node\'s order', () => {
  const look = (env: NodeJS.ProcessEnv, kubeconfig?: string) => lookUpKubeconfig({ kubeconfig, env, homeDir: home, serviceAccountDir });

  test('nothing anywhere: not found, with each place and what was there', () => {
    expect(look({})).toEqual({
      found: undefined,
      env: { value: undefined, missing: [] },
      home: { path: path.join(home, '.kube', 'config'), exists: false },
      inCluster: { host: undefined, tokenFile: path.join(serviceAccountDir, 'token'), tokenExists: false },
    });
    expect(lookUpKubeconfig({ env: {}, homeDir: null, serviceAccountDir }).home).toEqual({ path: undefined, exists: false });
  });

  test('$KUBECONFIG wins and must name existing files; then ~/.kube/config; then a ServiceAccount token with KUBERNETES_SERVICE_HOST', () => {
    const a = write(path.join(dir, 'a.yaml'));
    const missing = path.join(dir, 'b.yaml');
    write(path.join(home, '.kube', 'config'));
    expect(look({ KUBECONFIG: a }).found).toBe('env');
    expect(look({ KUBECONFIG: `${a}${path.delimiter}${missing}` })).toMatchObject({ found: undefined, env: { missing: [missing] }, home: { exists: true } });
    expect(look({}).found).toBe('home');
    fs.rmSync(path.join(home, '.kube'), { recursive: true });
    write(path.join(serviceAccountDir, 'token'));
    expect(look({}).found).toBeUndefined();
    expect(look({ KUBERNETES_SERVICE_HOST: '10.0.0.1' }).found).toBe('in-cluster');
  });

  test('a given kubeconfig is the only place looked at', () => {
    const given = write(path.join(dir, 'given.yaml'));
    expect(look({ KUBECONFIG: path.join(dir, 'nope') }, given).found).toBe('given');
    expect(look({}, path.join(dir, 'nope'))).toMatchObject({ found: undefined, given: { path: path.join(dir, 'nope'), exists: false } });
  });
});

test('the message names each place looked at and how to give a configuration', () => {
  const message = describeMissingKubeconfig(lookUpKubeconfig({ env: { KUBERNETES_SERVICE_HOST: '10.0.0.1' }, homeDir: home, serviceAccountDir }));
  expect(message).toBe(
    [
      'no Kubernetes configuration found; looked at:',
      '  $KUBECONFIG: unset',
      `  ~/.kube/config: ${path.join(home, '.kube', 'config')} (missing)`,
      `  in-cluster: not in a pod (no token at ${path.join(serviceAccountDir, 'token')})`,
      'Give a kubeconfig with --kubeconfig FILE or $KUBECONFIG, or go through the rayshift API server with --api-server URL.',
    ].join('\n'),
  );
  const viaEnv = describeMissingKubeconfig(lookUpKubeconfig({ env: { KUBECONFIG: '/nowhere/config' }, homeDir: home, serviceAccountDir }));
  expect(viaEnv).toContain('  $KUBECONFIG: /nowhere/config (missing: /nowhere/config; with $KUBECONFIG set nothing else is looked at)');
  const homeless = describeMissingKubeconfig(lookUpKubeconfig({ env: {}, homeDir: null, serviceAccountDir }));
  expect(homeless).toContain('  ~/.kube/config: no home folder ($HOME is unset or unreadable)\n');
  expect(homeless).toContain('  in-cluster: not in a pod (KUBERNETES_SERVICE_HOST is unset, no token at ');
  expect(describeMissingKubeconfig(lookUpKubeconfig({ kubeconfig: '/nowhere/kc', env: {}, homeDir: home, serviceAccountDir }))).toBe('the kubeconfig /nowhere/kc (--kubeconfig) does not exist');
});

// The CLI looks at the real ServiceAccount folder, so this runs only outside a pod.
const outsideAPod = fs.existsSync(path.join(SERVICE_ACCOUNT_DIR, 'token')) ? describe.skip : describe;

outsideAPod('the CLI without a configuration', () => {
  const saved = { KUBECONFIG: process.env.KUBECONFIG, KUBERNETES_SERVICE_HOST: process.env.KUBERNETES_SERVICE_HOST, HOME: process.env.HOME };
  beforeEach(() => {
    delete process.env.KUBECONFIG;
    delete process.env.KUBERNETES_SERVICE_HOST;
    process.env.HOME = home;
  });
  afterEach(() => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });

  test.each([['status', 'llm'], ['status', 'rbg/pd'], ['pause', 'llm'], ['abort', 'llm'], ['get', 'rayservices']])('rayshift %s %s says where it looked, exit 1', async (verb, name) => {
    const r = await rayshiftIn([verb, name, '-n', 'serving']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('error: no Kubernetes configuration found; looked at:\n  $KUBECONFIG: unset\n');
    expect(r.stderr).toContain(`  ~/.kube/config: ${path.join(home, '.kube', 'config')} (missing)\n`);
    expect(r.stderr).toContain('  in-cluster: not in a pod (KUBERNETES_SERVICE_HOST is unset, no token at /var/run/secrets/kubernetes.io/serviceaccount/token)\n');
    expect(r.stderr).toContain('--kubeconfig FILE');
    expect(r.stderr).not.toContain('HTTP protocol');
  });

  test('a --kubeconfig that does not exist is named', async () => {
    const r = await rayshiftIn(['resume', 'llm', '--kubeconfig', path.join(dir, 'kc.yaml')]);
    expect(r).toEqual({ code: 1, stdout: '', stderr: `error: the kubeconfig ${path.join(dir, 'kc.yaml')} (--kubeconfig) does not exist\n` });
  });

  test('a --context the kubeconfig lacks is named; --context goes with the kubeconfig, not --api-server', async () => {
    const kc = path.join(dir, 'kc.yaml');
    fs.writeFileSync(kc, 'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:9"}}]\nusers: [{name: u, user: {}}]\ncontexts: [{name: here, context: {cluster: c, user: u}}]\ncurrent-context: here\n');
    for (const verb of [['get', 'rayservices'], ['status', 'llm'], ['pause', 'llm']]) {
      expect(await rayshiftIn([...verb, '--kubeconfig', kc, '--context', 'prod'])).toEqual({ code: 1, stdout: '', stderr: 'error: kubeconfig has no context "prod"\n' });
    }
    process.env.KUBECONFIG = kc;
    expect(await rayshiftIn(['get', 'rayservices', '--context', 'prod'])).toEqual({ code: 1, stdout: '', stderr: 'error: kubeconfig has no context "prod"\n' });
    expect(await rayshiftIn(['status', 'llm', '--context', 'here', '--api-server', 'https://127.0.0.1:9'])).toEqual({ code: 2, stdout: '', stderr: 'error: --context and --api-server exclude each other\n' });
  });
});
