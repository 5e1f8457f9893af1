/** The API server's install-chart construct and the `api-server` command's flag parsing. */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { Testing } from 'cdk8s';
import { k8s } from 'cdk8s-plus-28';
import { Command } from 'commander';
import pino from 'pino';
import { API_SERVER_NAME, ApiServer, impersonationRules } from '../../operator/chart/api-server';
import { quantityMiB } from '../../operator/chart/node-heap';
import { registerApiServerCommand, startFromFlags } from '../../lib/cli/api-server-command';
import { parseListen } from '../../lib/cli/flag-parsers';
import { neverCalledKubeConfig } from './support/never-called-kubeconfig';

test('the construct emits a ServiceAccount, auth-delegator binding, narrow roles, a TLS Deployment and a Service', () => {
  const chart = Testing.chart();
  new ApiServer(chart, 'api', { namespace: 'rayshift-system', tlsSecretName: 'api-tls' });
  const objects = Testing.synth(chart) as any[];
  const byKind = (k: string) => objects.filter((o) => o.kind === k);
  expect(byKind('ServiceAccount').map((o) => o.metadata.name)).toEqual([API_SERVER_NAME]);
  expect(byKind('ClusterRoleBinding').map((o) => o.roleRef.name).sort()).toEqual(['rayshift-api-server:impersonator', 'rayshift-api-server:namespace-lister', 'system:auth-delegator']);
  const rules = byKind('ClusterRole').flatMap((o) => o.rules);
  for (const r of rules) for (const s of [...r.apiGroups, ...r.resources, ...r.verbs]) expect(s).not.toContain('*');
  const impersonable = rules.filter((r) => r.verbs.includes('impersonate')).flatMap((r) => r.resources);
  expect(impersonable.sort()).toEqual(['groups', 'serviceaccounts', 'uids', 'userextras/authentication.kubernetes.io/credential-id', 'users']);
  // Its own identity only lists namespaces: every read and write of the API is made as the caller.
  expect(byKind('ClusterRole').find((o) => o.metadata.name === 'rayshift-api-server:namespace-lister').rules).toEqual([{ apiGroups: [''], resources: ['namespaces'], verbs: ['list'] }]);
  const deployment = byKind('Deployment')[0].spec.template.spec;
  expect(deployment.containers[0].args).toEqual(['api-server', '--listen', ':8443', '--tls-cert', '/etc/rayshift/tls/tls.crt', '--tls-key', '/etc/rayshift/tls/tls.key']);
  expect(deployment.volumes).toEqual([{ name: 'tls', secret: { secretName: 'api-tls' } }]);
  expect(byKind('Service')[0].spec.ports[0]).toMatchObject({ port: 8443, targetPort: 'https' });
});

test('constrained impersonation grants user-info and ServiceAccount impersonation and impersonate-on verbs per reached resource only', () => {
  const rules = impersonationRules('constrained');
  expect(rules.flatMap((r) => r.verbs)).not.toContain('impersonate');
  expect(rules[0].verbs).toEqual(['impersonate:user-info']);
  expect(rules.find((r) => r.verbs.includes('impersonate:serviceaccount'))).toEqual({ apiGroups: ['authentication.k8s.io'], resources: ['serviceaccounts'], verbs: ['impersonate:serviceaccount'] });
  expect(rules.find((r) => r.resources?.includes('configmaps'))?.verbs).toEqual([
    ...['get', 'list', 'create', 'delete'].map((v) => `impersonate-on:user-info:${v}`),
    ...['get', 'list', 'create', 'delete'].map((v) => `impersonate-on:serviceaccount:${v}`),
  ]);
  // Steering patches rayshift.dev RayServices as the caller.
  expect(rules.find((r) => r.apiGroups?.join() === 'rayshift.dev' && r.resources?.includes('rayservices'))?.verbs).toEqual(['impersonate-on:user-info:patch', 'impersonate-on:serviceaccount:patch']);
});

test("Node's heap is sized from the container's memory limit: half of it as old space, small semi-spaces; none without a limit", () => {
  const nodeOptions = (resources?: k8s.ResourceRequirements) => {
    const chart = Testing.chart();
    new ApiServer(chart, 'api', { namespace: 'rayshift-system', tlsSecretName: 'tls', resources });
    const deployment = (Testing.synth(chart) as any[]).find((o) => o.kind === 'Deployment');
    return deployment.spec.template.spec.containers[0].env;
  };
  expect(nodeOptions()).toEqual([{ name: 'NODE_OPTIONS', value: '--max-old-space-size=128 --max-semi-space-size=2' }]);
  expect(nodeOptions({ limits: { memory: k8s.Quantity.fromString('1Gi') } })).toEqual([{ name: 'NODE_OPTIONS', value: '--max-old-space-size=512 --max-semi-space-size=2' }]);
  expect(nodeOptions({ requests: { memory: k8s.Quantity.fromString('64Mi') } })).toBeUndefined();
  expect([quantityMiB('256Mi'), quantityMiB('268435456'), quantityMiB('1Gi'), quantityMiB('300M'), quantityMiB('lots')]).toEqual([256, 256, 1024, 300e6 / 1024 ** 2, undefined]);
});

test('--listen takes host:port, [v6]:port or :port', () => {
  expect(parseListen(':8443')).toEqual({ port: 8443 });
  expect(parseListen('127.0.0.1:80')).toEqual({ host: '127.0.0.1', port: 80 });
  expect(parseListen('[::1]:9')).toEqual({ host: '::1', port: 9 });
  for (const bad of ['8443', 'host:', 'h:99999']) expect(() => parseListen(bad)).toThrow(/host:port/);
});

test('the command registers with its flags', () => {
  const program = new Command('rayshift').exitOverride();
  registerApiServerCommand(program, () => undefined);
  const cmd = program.commands.find((c) => c.name() === 'api-server')!;
  expect(cmd.options.map((o) => o.long)).toEqual([
    '--kubeconfig',
    '--listen',
    '--tls-cert',
    '--tls-key',
    '--insecure-local',
    '--audience',
    '--log-level',
    '--dashboard-dir',
    '--no-dashboard',
    '--max-body-bytes',
    '--token-recheck-seconds',
    '--idle-timeout-seconds',
    '--http1-idle-timeout-seconds',
    '--session-timeout-seconds',
    '--max-sessions',
    '--max-streams-per-session',
    '--max-watches-per-caller',
    '--no-access-log',
  ]);
});

/** The api-server command's options after parsing `args`, or the error commander printed. */
function parseApiServerFlags(args: string[]): { opts?: Record<string, unknown>; error?: string } {
  let error = '';
  const program = new Command('rayshift').exitOverride().configureOutput({ writeErr: (t) => (error += t), writeOut: () => undefined });
  registerApiServerCommand(program, () => undefined);
  const cmd = program.commands.find((c) => c.name() === 'api-server')!;
  try {
    cmd.parseOptions(args);
    return { opts: cmd.opts() };
  } catch {
    return { error };
  }
}

test('--max-body-bytes and --token-recheck-seconds take integers in their ranges; the error names the flag, the range and the value', () => {
  expect(parseApiServerFlags(['--max-body-bytes', '1048576', '--token-recheck-seconds', '600']).opts).toMatchObject({ maxBodyBytes: 1048576, tokenRecheckSeconds: 600 });
  expect(parseApiServerFlags(['--max-body-bytes', '1024', '--token-recheck-seconds', '1']).opts).toMatchObject({ maxBodyBytes: 1024, tokenRecheckSeconds: 1 });
  expect(parseApiServerFlags(['--max-body-bytes', '1023']).error).toContain('--max-body-bytes must be an integer from 1024 to 16777216; got "1023"');
  expect(parseApiServerFlags(['--max-body-bytes', '4MiB']).error).toContain('--max-body-bytes must be an integer from 1024 to 16777216; got "4MiB"');
  expect(parseApiServerFlags(['--token-recheck-seconds', '0']).error).toContain('--token-recheck-seconds must be an integer from 1 to 600; got "0"');
  expect(parseApiServerFlags(['--token-recheck-seconds', '1.5']).error).toContain('--token-recheck-seconds must be an integer from 1 to 600; got "1.5"');
  expect(parseApiServerFlags(['--token-recheck-seconds', '601']).error).toContain('got "601"');
});

test('the connection limits take integers in their ranges, each named in its error', () => {
  const given = ['--idle-timeout-seconds', '5', '--http1-idle-timeout-seconds', '7', '--session-timeout-seconds', '600', '--max-sessions', '100', '--max-streams-per-session', '10', '--max-watches-per-caller', '3'];
  expect(parseApiServerFlags(given).opts).toMatchObject({ idleTimeoutSeconds: 5, http1IdleTimeoutSeconds: 7, sessionTimeoutSeconds: 600, maxSessions: 100, maxStreamsPerSession: 10, maxWatchesPerCaller: 3 });
  expect(parseApiServerFlags(['--idle-timeout-seconds', '0']).error).toContain('--idle-timeout-seconds must be an integer from 1 to 3600; got "0"');
  expect(parseApiServerFlags(['--http1-idle-timeout-seconds', '3601']).error).toContain('--http1-idle-timeout-seconds must be an integer from 1 to 3600; got "3601"');
  expect(parseApiServerFlags(['--max-sessions', '100001']).error).toContain('--max-sessions must be an integer from 1 to 100000; got "100001"');
  expect(parseApiServerFlags(['--max-watches-per-caller', 'many']).error).toContain('--max-watches-per-caller must be an integer from 1 to 10000; got "many"');
});

test('--max-body-bytes reaches the server: a larger body is 413, a smaller one is not', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rayshift-api-flags-'));
  const kubeconfig = path.join(dir, 'kubeconfig');
  fs.writeFileSync(kubeconfig, neverCalledKubeConfig().exportConfig());
  const server = await startFromFlags({ kubeconfig, insecureLocal: true, listen: '127.0.0.1:0', maxBodyBytes: 2048 }, pino({ level: 'silent' }));
  if (typeof server === 'number') throw new Error(`exit ${server}`);
  const post = (bytes: number) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const body = JSON.stringify({ name: 'x', labels: { pad: 'p'.repeat(bytes) } });
      const req = http.request({ host: '127.0.0.1', port: server.port, path: '/apis/rayshift/v1/namespaces/ns/rayservices', method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      req.end(body);
    });
  try {
    const large = await post(3000);
    expect(large.status).toBe(413);
    expect(large.text).toContain('2048');
    expect((await post(500)).status).not.toBe(413);
  } finally {
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('--no-access-log reaches the server: a call is logged by default and not with the flag', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rayshift-api-flags-'));
  const kubeconfig = path.join(dir, 'kubeconfig');
  fs.writeFileSync(kubeconfig, neverCalledKubeConfig().exportConfig());
  const callLines = async (accessLog: boolean | undefined): Promise<unknown[]> => {
    const lines: Record<string, unknown>[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    const server = await startFromFlags({ kubeconfig, insecureLocal: true, listen: '127.0.0.1:0', accessLog }, log);
    if (typeof server === 'number') throw new Error(`exit ${server}`);
    try {
      const status = await new Promise<number>((resolve, reject) => {
        http.get({ host: '127.0.0.1', port: server.port, path: '/apis/rayshift/v1/namespaces/ns/rayservices/x' }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        }).on('error', reject);
      });
      expect(status).toBeGreaterThanOrEqual(400); // the never-called kubeconfig cannot answer, but the call is made
    } finally {
      await server.close();
    }
    return lines.filter((l) => l.msg === 'call');
  };
  try {
    expect(await callLines(undefined)).toEqual([expect.objectContaining({ route: expect.stringContaining('/rayservices/{name}'), namespace: 'ns', name: 'x' })]);
    expect(await callLines(false)).toEqual([]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
