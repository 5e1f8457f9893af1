/**
 * What one RayService status write costs the real kube-apiserver + etcd, in CPU and wall time, for
 * each way of writing it (server-side apply, RFC 6902 JSON patch, RFC 7386 merge patch), next to a
 * ConfigMap carrying the same JSON and a traffic step's HTTPRoute weight patch. It bounds
 * what a 2-core machine can sustain: `bench/operator-scale.bench.ts` needs this cost times the
 * writes of every traffic step (the operator's and the Gateway's), times the steps per second.
 * Prints figures; never asserts.
 *
 *   npx tsx bench/apiserver-write-cost.bench.ts [--writes 1000]
 */
import { HTTPROUTE, RAYSHIFT_RAYSERVICE, createNamespace, rayService, startOperatorEnv } from '../test/support/operator-env';
import { KubeObject } from '../lib/runtime/kube/types';
import { cpuSecondsOf, fmt, printTable } from './operator-harness';

const NS = 'write-cost';
const CONFIGMAP = { apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true };

/** An HTTPRoute with one rule of two weighted backends, as the operator manages it. */
function weightedRoute(name: string): KubeObject {
  const backend = (n: string, weight: number) => ({ name: n, port: 8000, weight });
  return {
    apiVersion: HTTPROUTE.apiVersion,
    kind: HTTPROUTE.kind,
    metadata: { name, namespace: NS },
    spec: { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [backend('a-serve-svc', 100), backend('b-serve-svc', 0)] }] },
  } as KubeObject;
}

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

/** A status of the shape and size the operator writes during a traffic step. */
function stepStatus(i: number): Record<string, unknown> {
  const now = Date.now();
  return {
    observedGeneration: 1,
    conditions: [{ type: 'Ready', status: 'True', reason: 'Upgrading', message: `traffic step ${i}`, lastTransitionTime: new Date(now).toISOString() }],
    engineState: { phase: 'Upgrading', reason: 'Migrating', activeClusterName: 'svc-a', pendingClusterName: 'svc-b', activeWeight: 100 - (i % 100), pendingWeight: i % 100, lastTrafficMigratedTime: now, lastProgressTime: now, trafficConfirmed: false, deletions: [] },
    lastUpdateTime: new Date(now).toISOString(),
  };
}

async function main(): Promise<void> {
  const writes = arg('writes', 1000);
  const env = await startOperatorEnv();
  const c = env.admin;
  await createNamespace(c, NS);
  const styles: [string, (name: string, i: number) => Promise<unknown>][] = [
    ['RayService status: server-side apply (force)', (name, i) => c.applyStatus({ apiVersion: RAYSHIFT_RAYSERVICE.apiVersion, kind: RAYSHIFT_RAYSERVICE.kind, metadata: { name, namespace: NS }, status: stepStatus(i) }, { force: true })],
    ['RayService status: JSON patch (add /status)', (name, i) => c.patchJson(RAYSHIFT_RAYSERVICE, name, NS, [{ op: 'add', path: '/status', value: stepStatus(i) }], { subresource: 'status' })],
    ['RayService status: merge patch ({status})', (name, i) => c.patchMerge(RAYSHIFT_RAYSERVICE, name, NS, { status: stepStatus(i) }, { subresource: 'status' })],
    // For scale: the same JSON as a built-in object's data, and the route patch of a traffic step.
    ['ConfigMap: merge patch (same JSON as data)', (name, i) => c.patchMerge(CONFIGMAP, name, NS, { data: { status: JSON.stringify(stepStatus(i)) } })],
    ['HTTPRoute: JSON patch of two weights', (name, i) => c.patchJson(HTTPROUTE, name, NS, [{ op: 'replace', path: '/spec/rules/0/backendRefs/0/weight', value: 100 - (i % 100) }, { op: 'replace', path: '/spec/rules/0/backendRefs/1/weight', value: i % 100 }])],
  ];
  const rows: (string | number)[][] = [['write', 'round', 'CPU ms / write (apiserver + etcd)', 'wall ms / write']];
  for (let s = 0; s < 3; s++) await c.create(rayService(NS, `svc-${s}`, { maxSurge: 50, step: 25, interval: 5 }));
  await c.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'svc-3', namespace: NS }, data: {} });
  await c.create(weightedRoute('svc-4'));
  for (let round = 1; round <= 2; round++) {
    for (let s = 0; s < styles.length; s++) {
      const [label, write] = styles[s];
      const cpu0 = cpuSecondsOf(env.cp.dir);
      const t0 = performance.now();
      for (let i = 0; i < writes; i++) await write(`svc-${s}`, i);
      rows.push([label, round, fmt(((cpuSecondsOf(env.cp.dir) - cpu0) * 1000) / writes), fmt((performance.now() - t0) / writes)]);
    }
  }
  console.log(`${writes} sequential writes per kind and round, one object each, simulators idle`);
  printTable(rows);
  await env.stop();
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
