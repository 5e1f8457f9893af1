/**
 * Version-matched routing under executor `pulumi`, on the test cluster: the provider operations of
 * `RoleBasedGroupRollout` (in this process, no Pulumi CLI, as cluster-pulumi-rbg-rollout runs them)
 * roll a routed prefill/decode group (4/2) synthesized by the `RoleBasedGroup` construct with a
 * `router` and applied by a "pulumi" field manager, as `@pulumi/kubernetes` applies the component's
 * children; RBG v0.7.0's real controller rolls its Stateless RoleInstanceSets, kwok runs the Pods and
 * the rendered router Deployments. A watch records every weight the route carries and every state
 * of the roles' workloads: each new-release weight must be covered by ready new-release replicas
 * (test/support/rbg-router-coverage.ts, computed from the recorded counts), the weight ends at 100
 * without falling back, and the run returns only once the old release's router is scaled to 0, as
 * the operator leaves it. No request traffic: the operator suite (cluster-rbg-router-operator)
 * sends it through real sglang-routers with the same reconciler. Needs `npm run controlplane:build`
 * and `bash scripts/build-cluster.sh kwok rbg`.
 */
import * as rollout from '../../lib/pulumi/rbg-rollout-operations';
import { KubeClient } from '../../lib/runtime/kube/client';
import { readRolloutStatus } from '../../lib/runtime/rbg/status';
import { DEPLOYMENT_TYPE, RBG_V1ALPHA2_TYPE } from '../../lib/spec/object-names';
import { TestCluster } from '../support/cluster';
import { PulumiRbgCluster, startPulumiRbgCluster } from '../support/pulumi-rbg-cluster';
import { upstreamCrdFiles } from '../support/controlplane';
import { followRouteWeight, RoutedGroupShape, synthesizeRoutedGroup } from '../support/rbg-routed-group';
import { expectRouteWeightsCovered } from '../support/rbg-router-coverage';
import { WorkloadRecorder } from '../support/rbg-workload-recorder';

const NS = 'pulumi-routed';
const NAME = 'pd';
const ROUTE = `${NAME}-pd-router`;
const REPLICAS = { prefill: 4, decode: 2 };
const SHAPE: RoutedGroupShape = { name: NAME, namespace: NS, replicas: REPLICAS, executor: 'pulumi' };
let env: PulumiRbgCluster;
let cluster: TestCluster;
let admin: KubeClient;
let applier: KubeClient;
let kubeconfig: string;
const watches: { stop(): void }[] = [];

beforeAll(async () => {
  const gatewayApi = (await upstreamCrdFiles()).filter((f) => f.includes('gateway.networking.k8s.io_'));
  env = await startPulumiRbgCluster({ rbg: true, nodes: 2, crds: gatewayApi }, NS);
  ({ cluster, admin, applier, kubeconfig } = env);
}, 300_000);

afterAll(async () => {
  for (const w of watches) w.stop();
  await env?.stop();
}, 60_000);

beforeEach(() => jest.spyOn(console, 'log').mockImplementation(() => undefined));
afterEach(() => jest.restoreAllMocks());

function inputs(specHash: string): rollout.RbgRolloutInputs {
  return { apiVersion: RBG_V1ALPHA2_TYPE.apiVersion, name: NAME, namespace: NS, specHash, deadlineSeconds: 180, pollMs: 100, kubeconfig };
}

test('pulumi up moves the router route with the ready new-release replicas and returns with the old router scaled to 0', () => cluster.printLogsOnFailure(async () => {
  const v1 = synthesizeRoutedGroup(SHAPE, 'sglang:v1');
  expect(v1.objects.map((o) => o.kind)).toEqual(['RoleBasedGroup', 'ServiceAccount', 'Role', 'RoleBinding', 'Deployment', 'Service', 'HTTPRoute']);
  for (const o of v1.objects) await applier.apply(o, { force: true });
  const recorder = new WorkloadRecorder(admin, NS, NAME, Object.keys(REPLICAS));
  watches.push(recorder);
  await rollout.create({}, inputs('v1'));
  const armed = readRolloutStatus(await admin.get(RBG_V1ALPHA2_TYPE, NAME, NS))!.coordinations[0];
  expect(armed.router?.releases).toEqual([{ revision: v1.revision, service: `${ROUTE}-${v1.revision}`, weight: 100, current: true }]);
  const ready = await recorder.until('every workload ready at v1', (s) => Object.entries(REPLICAS).every(([r, n]) => s[r]?.observed && s[r].updated === n && s[r].ready === n));
  const v1Revision = Object.fromEntries(Object.keys(REPLICAS).map((r) => [r, ready[r].updateRevision]));

  const v2 = synthesizeRoutedGroup(SHAPE, 'sglang:v2', v1.revision);
  const oldRouter = `${ROUTE}-${v1.revision}`;
  const newRouter = `${ROUTE}-${v2.revision}`;
  // The route's new-release weight, and how many workload states had been recorded when each arrived.
  const route = followRouteWeight(admin, NS, ROUTE, newRouter, () => recorder.history.length);
  watches.push(route);
  const from = recorder.history.length;
  for (const o of v2.objects) await applier.apply(o, { force: true });
  const updated = await rollout.update({}, inputs('v2'));
  expect(updated.outs!.roundsLastRun).toBeGreaterThan(0);

  // When the run returns, the rollout is complete and the old router is already at 0.
  const done = readRolloutStatus(await admin.get(RBG_V1ALPHA2_TYPE, NAME, NS))!.coordinations[0];
  expect(done.phase).toBe('Complete');
  expect(done.router).toEqual({
    route: ROUTE,
    removeOld: true,
    releases: [
      { revision: v1.revision, service: oldRouter, weight: 0, current: false },
      { revision: v2.revision, service: newRouter, weight: 100, current: true },
    ],
    scaledDown: [{ deployment: oldRouter, replicas: 1 }],
  });
  const replicas = async (name: string) => ((await admin.get(DEPLOYMENT_TYPE, name, NS)).spec as { replicas?: number }).replicas;
  expect([await replicas(oldRouter), await replicas(newRouter)]).toEqual([0, 1]);

  // The route's watch may deliver the last write after the run returned.
  await route.full;
  const seq = expectRouteWeightsCovered(route.weights, recorder.history, from, v1Revision, REPLICAS);
  process.stdout.write(`routed 4/2 rollout under pulumi up: new-release weights ${seq.join(' → ')}; ${updated.outs!.roundsLastRun} rounds; ${oldRouter} scaled to 0 before the run returned\n`);
}), 400_000);
