/**
 * A gRPC Serve app upgraded by the rayshift operator through a GRPCRoute on a real Traefik, under
 * steady gRPC load (h2c unary calls of rayshift.test.Echo/Version), with real Ray heads (issue 8).
 * Only KubeRay's RayCluster controller and its pods are simulated. Needs `npm run e2e:setup`.
 */
import { engineState } from '../support/operator-env';
import { expectForwardUpgrade, summary, windowReport } from './support/assertions';
import { E2EEnv, E2E_GRPC_PORT, startE2EEnv } from './support/e2e-env';
import { grpcSender } from './support/grpc-load';
import { E2E_GRPC_RATE, deployAndWaitServing, e2eGrpcServeConfig, e2eRayService, getService, runUnderLoad, updateSpec, upgradedAwayFrom } from './support/scenario';

const RATE = E2E_GRPC_RATE;
const REPLICAS = 2;
const SERVICE = 'echo';
const APP = 'echo';

let env: E2EEnv;
let first: string;

beforeAll(async () => {
  env = await startE2EEnv();
  first = await deployAndWaitServing(env, e2eRayService(SERVICE, { version: 'v1', cpu: '1', replicas: REPLICAS, grpc: true, step: 25, interval: 2, maxSurge: 50 }), 'v1', 600_000, grpcSender('127.0.0.1', E2E_GRPC_PORT, APP));
}, 1_200_000);

afterAll(async () => {
  await env?.stop();
});

test('gRPC upgrade {step 25, interval 2 s, maxSurge 50} through a GRPCRoute: zero failed calls, v2 share never decreasing and within ±5 points, 100 % v2 at the end', async () => {
  const sender = grpcSender('127.0.0.1', E2E_GRPC_PORT, APP);
  const run = await runUnderLoad(
    env,
    SERVICE,
    RATE,
    () => updateSpec(env, SERVICE, (spec) => {
      spec.serveConfigV2 = e2eGrpcServeConfig('v2', REPLICAS);
      spec.rayClusterConfig.workerGroupSpecs[0].template.spec.containers[0].resources.requests.cpu = '2';
      return spec;
    }),
    () => upgradedAwayFrom(env, SERVICE, first),
    { what: 'gRPC upgrade v1 → v2', sender, routeKind: 'GRPCRoute', app: APP, deployment: 'Echo' },
  );
  const now = engineState(await getService(env, SERVICE)).activeClusterName as string;
  process.stdout.write(`${summary('gRPC {25,2,50} v1→v2', run, RATE)}\n${windowReport('gRPC', run, 'v2', now)}\n`);
  expectForwardUpgrade(run, { oldVersion: 'v1', newVersion: 'v2', newCluster: now, replicas: REPLICAS });
}, 1_800_000);
