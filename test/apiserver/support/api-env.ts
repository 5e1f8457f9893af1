/**
 * Shared setup of the API server's integration tests and benchmark: the operator test environment
 * (real kube-apiserver with RBAC, CRDs, TEST-ONLY simulators; optionally the in-process operator)
 * started with two extra token users, the `rayshift` audience accepted and an audit log, plus a
 * rayshift API server on TLS (the control plane's serving certificate, SAN 127.0.0.1) acting with the
 * admin's kubeconfig, and clients for every protocol.
 */
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Logger } from 'pino';
import { ApiClient, ApiProtocol, createApiClient } from '../../../lib/apiserver/client';
import { ApiServerOptions, RunningApiServer, startApiServer } from '../../../lib/apiserver/server';
import type { ServerLimitValues } from '../../../lib/apiserver/server-limits';
import { STEERING_VERBS } from '../../../lib/engine/steering';
import { KubeClient } from '../../../lib/runtime/kube/client';
import type { KubeObject } from '../../../lib/runtime/kube/types';
import { loadClientNode } from '../../../lib/runtime/kube/client-node';
import { ControlPlane } from '../../support/controlplane';
import { createNamespace, startOperatorEnv, startOperatorHarness, waitFor } from '../../support/operator-env';
import { CHART_IDENTITY } from './chart-server';
import { keepAliveAgent } from './keep-alive-agent';

/** Namespaces of the two test users. */
export const TEAM_A = 'team-a';
export const TEAM_B = 'team-b';

/** A REST answer. */
export interface RestAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: any;
  readonly text: string;
}

/** Everything an API server test needs. */
export interface ApiEnv {
  readonly cp: ControlPlane;
  readonly admin: KubeClient;
  readonly api: RunningApiServer;
  /** Bearer tokens of alice (team-a) and bob (team-b). */
  readonly tokens: { readonly alice: string; readonly bob: string };
  /** Path of the kube-apiserver audit log (JSON lines). */
  readonly auditLog: string;
  /** One REST request to the API server. */
  rest(method: string, urlPath: string, body?: unknown, opts?: { token?: string | null; headers?: Record<string, string> }): Promise<RestAnswer>;
  /** A typed client (closed by `stop`). */
  client(protocol: ApiProtocol, token: string): ApiClient;
  stop(): Promise<void>;
}

const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  users: [${CHART_IDENTITY}]
- level: Metadata
  resources:
  - group: rayshift.dev
  - group: ray.io
  - group: ""
    resources: [configmaps]
- level: Request
  resources:
  - group: authorization.k8s.io
    resources: [subjectaccessreviews]
- level: None
`;

/** Role granting full RayService, RayCluster and ConfigMap rights in a namespace, and reads of RBGs and events. */
function teamRole(namespace: string): Record<string, unknown>[] {
  return [
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'ray-user', namespace },
      rules: [
        { apiGroups: ['rayshift.dev', 'ray.io'], resources: ['rayservices', 'rayclusters'], verbs: ['*'] },
        { apiGroups: ['rayshift.dev'], resources: STEERING_VERBS.map((verb) => `rayservices/${verb}`), verbs: ['update'] },
        { apiGroups: [''], resources: ['configmaps'], verbs: ['*'] },
        { apiGroups: ['workloads.x-k8s.io'], resources: ['rolebasedgroups', 'coordinatedpolicies'], verbs: ['get', 'list'] },
        { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['get', 'list'] },
      ],
    },
  ];
}

/**
 * Starts the environment; `operator` also runs the in-process operator; `apiserverArgs` go to
 * kube-apiserver; `dashboardDir` is served by the API server under `/ui/`; `heartbeatSeconds`,
 * `tokenRecheckSeconds`, `limits`, `authClock` and `log` (default silent) go to the API server.
 */
export async function startApiEnv(
  opts: {
    operator?: boolean;
    heartbeatSeconds?: number;
    tokenRecheckSeconds?: number;
    apiserverArgs?: readonly string[];
    dashboardDir?: string;
    log?: Logger;
    limits?: ServerLimitValues;
    authClock?: ApiServerOptions['authClock'];
  } = {},
): Promise<ApiEnv> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rayshift-api-'));
  const policy = path.join(dir, 'audit-policy.yaml');
  const auditLog = path.join(dir, 'audit.log');
  fs.writeFileSync(policy, AUDIT_POLICY);
  const tokens = { alice: `alice-${process.pid}-${Date.now()}`, bob: `bob-${process.pid}-${Date.now()}` };
  const controlPlane = {
    extraTokens: [
      { token: tokens.alice, user: 'alice', groups: ['team-a-devs'] },
      { token: tokens.bob, user: 'bob', groups: ['team-b-devs'] },
    ],
    apiserverArgs: ['--api-audiences=https://kubernetes.default.svc.cluster.local,rayshift', `--audit-policy-file=${policy}`, `--audit-log-path=${auditLog}`, ...(opts.apiserverArgs ?? [])],
  };
  const started = opts.operator ? await startOperatorHarness(controlPlane) : { env: await startOperatorEnv(controlPlane), stop: undefined };
  const env = started.env;
  const { cp, admin } = env;
  for (const [ns, group] of [
    [TEAM_A, 'team-a-devs'],
    [TEAM_B, 'team-b-devs'],
  ]) {
    await createNamespace(admin, ns);
    for (const role of teamRole(ns)) await admin.create(role as never);
    await admin.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'ray-users', namespace: ns },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'ray-user' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: group }],
    } as never);
  }
  const kc = new (loadClientNode().KubeConfig)();
  kc.loadFromFile(cp.kubeconfigPath);
  const pki = path.join(cp.dir, 'pki');
  const api = await startApiServer({
    kubeConfig: kc,
    host: '127.0.0.1',
    port: 0,
    tls: { cert: fs.readFileSync(path.join(pki, 'apiserver.crt')), key: fs.readFileSync(path.join(pki, 'apiserver.key')) },
    heartbeatSeconds: opts.heartbeatSeconds,
    tokenRecheckSeconds: opts.tokenRecheckSeconds,
    ...opts.limits,
    authClock: opts.authClock,
    dashboardDir: opts.dashboardDir,
    log: opts.log,
  });
  const agent = keepAliveAgent(cp.ca);
  const clients: ApiClient[] = [];
  return {
    cp,
    admin,
    api,
    tokens,
    auditLog,
    rest(method, urlPath, body, o = {}) {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const headers: Record<string, string> = { accept: 'application/json', ...(o.headers ?? {}) };
      const token = o.token === undefined ? tokens.alice : o.token;
      if (token !== null) headers.authorization = `Bearer ${token}`;
      if (payload !== undefined) headers['content-type'] = 'application/json';
      return new Promise<RestAnswer>((resolve, reject) => {
        const req = https.request(`${api.url}${urlPath}`, { method, headers, agent }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => {
            let parsed: unknown = text;
            try {
              parsed = JSON.parse(text);
            } catch {
              // not JSON (SSE, metrics)
            }
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed, text });
          });
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end(payload);
      });
    },
    client(protocol, token) {
      const c = createApiClient({ baseUrl: api.url, token, protocol, ca: cp.ca });
      clients.push(c);
      return c;
    },
    async stop() {
      for (const c of clients) c.close();
      agent.destroy();
      await api.close();
      if (started.stop) await started.stop();
      else await env.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** One kube-apiserver audit event, as far as the tests read it. */
export interface AuditEvent {
  readonly verb: string;
  readonly stage: string;
  readonly objectRef?: { readonly resource?: string; readonly name?: string; readonly namespace?: string };
  readonly user: { readonly username: string };
  readonly impersonatedUser?: { readonly username: string };
  readonly responseStatus?: { readonly code?: number };
}

/** The users the SubjectAccessReviews in the audit log so far asked about, one entry per review (the policy logs their requests). */
export function reviewedUsers(env: ApiEnv): string[] {
  const lines = fs.existsSync(env.auditLog) ? fs.readFileSync(env.auditLog, 'utf8').split('\n').filter(Boolean) : [];
  return lines
    .map((l) => JSON.parse(l) as AuditEvent & { requestObject?: { spec?: { user?: string } } })
    .filter((e) => e.stage === 'ResponseComplete' && e.objectRef?.resource === 'subjectaccessreviews')
    .map((e) => e.requestObject?.spec?.user ?? '');
}

/** Waits until the audit log holds a completed request on RayServices that `match`es (the log is written asynchronously), and returns the last such one. */
export async function auditEventOf(env: ApiEnv, match: (e: AuditEvent) => boolean): Promise<AuditEvent> {
  let found: AuditEvent | undefined;
  await waitFor(
    () => {
      const lines = fs.existsSync(env.auditLog) ? fs.readFileSync(env.auditLog, 'utf8').split('\n').filter(Boolean) : [];
      const events = lines.map((l) => JSON.parse(l) as AuditEvent).filter((e) => e.stage === 'ResponseComplete' && e.objectRef?.resource === 'rayservices' && match(e));
      found = events[events.length - 1];
      return found !== undefined;
    },
    'the audit event',
    30_000,
    200,
  );
  return found!;
}

/** Grants `user` the `rules` in `namespace`: a Role and a RoleBinding, both named `name`. */
export async function grantUser(admin: KubeClient, namespace: string, user: string, name: string, rules: readonly Record<string, unknown>[]): Promise<void> {
  await admin.create({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name, namespace }, rules } as never);
  await admin.create({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name, namespace },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
  } as never);
}

/**
 * A ServiceAccount caller: creates the ServiceAccount `name` in `namespace` with a Role and
 * RoleBinding (both named `name`) granting `rules` there, and returns a token of it for audience
 * `rayshift` (TokenRequest), the documented way for workloads to call the API server.
 */
export async function serviceAccountCaller(env: ApiEnv, namespace: string, name: string, rules: readonly Record<string, unknown>[]): Promise<string> {
  const sa = `/api/v1/namespaces/${namespace}/serviceaccounts`;
  const created = await env.cp.request('POST', sa, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } });
  if (created.status !== 201) throw new Error(`creating ServiceAccount ${namespace}/${name}: HTTP ${created.status}`);
  await env.admin.create({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name, namespace }, rules } as never);
  await env.admin.create({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name, namespace },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
    subjects: [{ kind: 'ServiceAccount', name, namespace }],
  } as never);
  const minted = await env.cp.request('POST', `${sa}/${name}/token`, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences: ['rayshift'], expirationSeconds: 3600 } });
  if (typeof minted.body?.status?.token !== 'string') throw new Error(`TokenRequest for ${namespace}/${name}: HTTP ${minted.status}`);
  return minted.body.status.token;
}

/** An `events.k8s.io/v1` Event named `name` about `regarding` (in `namespace`), reported now. */
export function eventAbout(name: string, namespace: string, regarding: { apiVersion: string; kind: string; name: string }, reason: string, note = reason): KubeObject {
  return {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name, namespace },
    eventTime: new Date().toISOString().replace('Z', '000Z'),
    reportingController: 'rayshift.dev/operator',
    reportingInstance: 'test',
    action: 'Reconcile',
    reason,
    type: 'Normal',
    note,
    regarding: { ...regarding, namespace },
  };
}

/** A minimal valid rayshift.dev RayService as a REST/JSON body (`spec` in the API's JSON mapping). */
export function rayServiceBody(name: string, opts: { cpu?: string; step?: number; interval?: number } = {}): Record<string, unknown> {
  return {
    name,
    spec: {
      serveConfigV2: `applications:\n- name: app\n  import_path: rayshift_testapp.app:build\n  route_prefix: /\n  deployments:\n  - name: Version\n    num_replicas: 4\n`,
      rayClusterConfig: {
        enableInTreeAutoscaling: true,
        headGroupSpec: {
          rayStartParams: { 'num-cpus': '0' },
          template: { spec: { containers: [{ name: 'ray-head', image: 'rayproject/ray:2.52.0', ports: [{ name: 'serve', containerPort: 8000 }, { name: 'dashboard', containerPort: 8265 }] }] } },
        },
        workerGroupSpecs: [
          { groupName: 'small', replicas: 1, minReplicas: 1, maxReplicas: 4, template: { spec: { containers: [{ name: 'ray-worker', image: 'rayproject/ray:2.52.0', resources: { requests: { cpu: opts.cpu ?? '1' } } }] } } },
        ],
      },
      rayClusterDeletionDelaySeconds: 0,
      upgradeStrategy: {
        type: 'UPGRADE_STRATEGY_TYPE_NEW_CLUSTER_WITH_INCREMENTAL_UPGRADE',
        clusterUpgradeOptions: { maxSurgePercent: 50, stepSizePercent: opts.step ?? 25, intervalSeconds: opts.interval ?? 1, gatewayClassName: 'simulated' },
      },
    },
  };
}
