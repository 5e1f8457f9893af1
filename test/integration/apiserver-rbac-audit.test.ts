/**
 * The chart's RBAC for the API server against what the API server sends, on the real kube-apiserver
 * with its audit log as the oracle (every request of the chart's ServiceAccount is logged, see
 * test/apiserver/support/api-env.ts). The server runs as that ServiceAccount with exactly the chart's
 * ClusterRoles and bindings (test/apiserver/support/chart-server.ts) and is driven through its paths:
 * a user caller (static token: name, UID, groups) and a ServiceAccount caller reading, listing,
 * listing across namespaces where they may not list cluster-wide (the server lists namespaces),
 * writing, asking for steering access and steering. Then:
 * - no request of the server's own was refused, and no impersonation was;
 * - every (group, resource, verb) the chart grants was used, except the ones named below with why
 *   (the grants for what it does as itself come from operator/chart/api-server-access.ts).
 * (Which verbs the callers' impersonated requests may use is the callers' RBAC, not the chart's.)
 */
import * as fs from 'node:fs';
import { fromJson, type JsonObject } from '@bufbuild/protobuf';
import type { RunningApiServer } from '../../lib/apiserver/server';
import { createApiClient } from '../../lib/apiserver/client';
import { RayServiceSchema } from '../../lib/apiserver/gen/rayshift/v1/rayservice_pb';
import { ApiEnv, TEAM_A, TEAM_B, rayServiceBody, serviceAccountCaller, startApiEnv, type AuditEvent } from '../apiserver/support/api-env';
import { CHART_IDENTITY, chartApiServerObjects, startChartApiServer } from '../apiserver/support/chart-server';
import { API_SERVER_OWN_ACCESS } from '../../operator/chart/api-server-access';
import { waitFor } from '../support/operator-env';


/** Granted but not used by this suite, each with why. */
const NOT_REACHED: Record<string, string> = {
  'authentication.k8s.io/userextras/authentication.kubernetes.io/credential-id impersonate':
    'carried for callers whose authenticator sets a credential id (OIDC); static-token users have none, and ServiceAccount callers are impersonated by name alone',
};

type Event = AuditEvent & { impersonatedUser?: { username: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> }; responseStatus?: { code?: number; message?: string }; objectRef?: AuditEvent['objectRef'] & { apiGroup?: string } };

let env: ApiEnv;
let server: RunningApiServer;

beforeAll(async () => {
  env = await startApiEnv();
  server = await startChartApiServer(env);
}, 180_000);

afterAll(async () => {
  await server?.close();
  await env?.stop();
});

/**
 * `group/resource verb` of every rule of the chart's ClusterRoles, and of the access table's rows the
 * bound `system:auth-delegator` grants (a built-in role, so not in the chart's objects).
 */
function chartGrants(): Set<string> {
  const delegated = API_SERVER_OWN_ACCESS.filter((a) => a.grantedBy === 'system:auth-delegator');
  const grants = new Set(delegated.flatMap((a) => a.verbs.map((v) => `${a.group || 'core'}/${a.resource} ${v}`)));
  const bindings = chartApiServerObjects().filter((o) => o.kind === 'ClusterRoleBinding').map((b) => (b as any).roleRef.name);
  expect(bindings).toContain('system:auth-delegator');
  for (const role of chartApiServerObjects().filter((o) => o.kind === 'ClusterRole')) {
    for (const rule of (role as any).rules as { apiGroups: string[]; resources: string[]; verbs: string[] }[]) {
      for (const g of rule.apiGroups) for (const r of rule.resources) for (const v of rule.verbs) grants.add(`${g || 'core'}/${r} ${v}`);
    }
  }
  return grants;
}

test("the chart's grants are exactly what the API server used; nothing it sent was refused", async () => {
  const sa = await serviceAccountCaller(env, TEAM_B, 'audit-sa', [{ apiGroups: ['rayshift.dev'], resources: ['rayservices'], verbs: ['get', 'list', 'create'] }]);
  const alice = createApiClient({ baseUrl: server.url, token: env.tokens.alice, ca: env.cp.ca });
  const saClient = createApiClient({ baseUrl: server.url, token: sa, ca: env.cp.ca });
  try {
    await alice.rayServices.createRayService({ namespace: TEAM_A, rayService: fromJson(RayServiceSchema, rayServiceBody('audited') as JsonObject) });
    await alice.rayServices.getRayService({ namespace: TEAM_A, name: 'audited' });
    // alice may not list cluster-wide: the server lists namespaces as itself and lists each as her.
    expect((await alice.rayServices.listAllRayServices({})).rayServices.map((s) => s.name)).toContain('audited');
    expect((await alice.rayServices.getSteeringAccess({ namespace: TEAM_A, name: 'audited' })).allowedVerbs).toHaveLength(7);
    await alice.rayServices.pauseRayService({ namespace: TEAM_A, name: 'audited', reason: 'audit' });
    await waitFor(async () => (await saClient.rayServices.listRayServices({ namespace: TEAM_B }).catch(() => undefined)) !== undefined, 'the RoleBinding to take effect', 30_000, 200);
  } finally {
    alice.close();
    saClient.close();
  }
  // The audit log is written after the answers: wait for the last call's event (the ServiceAccount's list).
  const events = (): Event[] =>
    fs.readFileSync(env.auditLog, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Event).filter((e) => e.stage === 'ResponseComplete' && e.user.username === CHART_IDENTITY);
  await waitFor(() => events().some((e) => e.impersonatedUser?.username === `system:serviceaccount:${TEAM_B}:audit-sa` && e.verb === 'list' && e.responseStatus?.code === 200), 'the last audit event', 30_000, 200);
  const all = events();
  const own = all.filter((e) => e.impersonatedUser === undefined);
  expect(own.filter((e) => (e.responseStatus?.code ?? 0) >= 400).map((e) => `${e.verb} ${e.objectRef?.resource}: ${e.responseStatus?.code}`)).toEqual([]);
  expect(all.filter((e) => /impersonate/.test(e.responseStatus?.message ?? '')).map((e) => e.responseStatus?.message)).toEqual([]);

  const used = new Set(own.map((e) => `${e.objectRef?.apiGroup || 'core'}/${e.objectRef?.resource} ${e.verb}`));
  for (const { impersonatedUser: who } of all.filter((e) => e.impersonatedUser)) {
    used.add(who!.username.startsWith('system:serviceaccount:') ? 'core/serviceaccounts impersonate' : 'core/users impersonate');
    if (who!.groups?.some((g) => !g.startsWith('system:'))) used.add('core/groups impersonate');
    if (who!.uid) used.add('authentication.k8s.io/uids impersonate');
    for (const key of Object.keys(who!.extra ?? {})) used.add(`authentication.k8s.io/userextras/${key} impersonate`);
  }
  const granted = chartGrants();
  console.log(`granted: ${[...granted].sort().join('; ')}\nused: ${[...used].sort().join('; ')}`);
  // Everything used was granted (a refusal would have shown above too), and everything granted was used or is named.
  expect([...used].filter((u) => !granted.has(u))).toEqual([]);
  expect([...granted].filter((g) => !used.has(g) && !(g in NOT_REACHED)).sort()).toEqual([]);
  expect(Object.keys(NOT_REACHED).filter((g) => used.has(g) || !granted.has(g))).toEqual([]);
});
