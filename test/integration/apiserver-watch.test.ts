/**
 * A watch whose caller loses their credentials ends, against a real kube-apiserver: a ServiceAccount
 * token (audience `rayshift`) watches a RayService with heartbeats an hour apart, the ServiceAccount
 * is deleted, and the stream ends with UNAUTHENTICATED at the next scheduled token re-check (every
 * second here) rather than delivering on.
 */
import { Code, ConnectError } from '@connectrpc/connect';
import { UpgradeEventType } from '../../lib/apiserver/gen/rayshift/v1/upgrade_pb';
import { ApiEnv, TEAM_A, rayServiceBody, startApiEnv } from '../apiserver/support/api-env';

let env: ApiEnv;

beforeAll(async () => {
  env = await startApiEnv({ tokenRecheckSeconds: 1 });
}, 180_000);

afterAll(async () => {
  await env?.stop();
});

test('deleting the ServiceAccount ends its open watch with UNAUTHENTICATED', async () => {
  const sa = `/api/v1/namespaces/${TEAM_A}/serviceaccounts`;
  expect((await env.cp.request('POST', sa, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'watcher' } })).status).toBe(201);
  await env.admin.create({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'watcher', namespace: TEAM_A },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'ray-user' },
    subjects: [{ kind: 'ServiceAccount', name: 'watcher', namespace: TEAM_A }],
  } as never);
  const minted = await env.cp.request('POST', `${sa}/watcher/token`, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences: ['rayshift'], expirationSeconds: 3600 } });
  const token: string = minted.body.status.token;
  expect((await env.rest('POST', `/apis/rayshift/v1/namespaces/${TEAM_A}/rayservices`, rayServiceBody('watched'))).status).toBe(200);

  const events: UpgradeEventType[] = [];
  let snapshot!: () => void;
  const sawSnapshot = new Promise<void>((r) => (snapshot = r));
  const ended = (async () => {
    try {
      for await (const e of env.client('grpc', token).rayServices.watchUpgrade({ namespace: TEAM_A, name: 'watched', heartbeatSeconds: 3600 })) {
        events.push(e.type);
        snapshot();
      }
      return undefined;
    } catch (e) {
      return ConnectError.from(e);
    }
  })();
  await sawSnapshot;
  expect(events).toEqual([UpgradeEventType.SNAPSHOT]);

  expect((await env.cp.request('DELETE', `${sa}/watcher`)).status).toBe(200);
  // Accepted tokens are cached 10 s, then the next re-check (every second) sees the refusal.
  const failure = await ended;
  expect(failure?.code).toBe(Code.Unauthenticated);
}, 60_000);
