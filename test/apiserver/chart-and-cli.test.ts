/** The API server's install-chart construct and the `api-server` command's flag parsing. */
import { Testing } from 'cdk8s';
import { Command } from 'commander';
import { API_SERVER_NAME, ApiServer, impersonationRules } from '../../operator/chart/api-server';
import { parseListen, registerApiServerCommand } from '../../lib/cli/api-server-command';

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
  expect(cmd.options.map((o) => o.long)).toEqual(['--kubeconfig', '--listen', '--tls-cert', '--tls-key', '--insecure-local', '--audience', '--log-level', '--dashboard-dir']);
});
