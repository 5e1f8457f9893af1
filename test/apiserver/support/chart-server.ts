/**
 * An API server running as the install chart's ServiceAccount with exactly the chart's RBAC
 * (`operator/chart/api-server.ts`, synthesized and applied to the test control plane), rather than as
 * the admin: what the chart grants is then what the tests exercise.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Testing } from 'cdk8s';
import { API_SERVER_NAME, ApiServer } from '../../../operator/chart/api-server';
import { RunningApiServer, startApiServer } from '../../../lib/apiserver/server';
import { loadClientNode } from '../../../lib/runtime/kube/client-node';
import type { KubeObject } from '../../../lib/runtime/kube/types';
import type { ApiEnv } from './api-env';

/** The namespace the chart's ServiceAccount lives in. */
export const CHART_NAMESPACE = 'rayshift-system';
/** The Kubernetes user name of the chart's API server. */
export const CHART_IDENTITY = `system:serviceaccount:${CHART_NAMESPACE}:${API_SERVER_NAME}`;

/** Applies the chart's ClusterRoles and bindings (idempotent) and starts an API server with a token of its ServiceAccount. */
export async function startChartApiServer(env: ApiEnv): Promise<RunningApiServer> {
  const chart = Testing.chart();
  new ApiServer(chart, 'api', { namespace: CHART_NAMESPACE, tlsSecretName: 'tls' });
  await env.admin.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: CHART_NAMESPACE } }, { force: true });
  for (const o of Testing.synth(chart).filter((o) => ['ClusterRole', 'ClusterRoleBinding'].includes(o.kind))) await env.admin.apply(o as KubeObject, { force: true });
  const token = await env.cp.serviceAccountToken(CHART_NAMESPACE, API_SERVER_NAME);
  const kc = new (loadClientNode().KubeConfig)();
  kc.loadFromOptions({
    clusters: [{ name: 'cp', server: env.cp.url, caFile: env.cp.caFile }],
    users: [{ name: 'sa', token }],
    contexts: [{ name: 'sa', cluster: 'cp', user: 'sa' }],
    currentContext: 'sa',
  });
  const pki = path.join(env.cp.dir, 'pki');
  return startApiServer({ kubeConfig: kc, host: '127.0.0.1', port: 0, tls: { cert: fs.readFileSync(path.join(pki, 'apiserver.crt')), key: fs.readFileSync(path.join(pki, 'apiserver.key')) } });
}
