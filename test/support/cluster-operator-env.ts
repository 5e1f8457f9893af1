/**
 * The rayshift operator (in the test process) on the test cluster (`cluster.ts`): the real KubeRay
 * operator turns the operator's RayClusters into head and worker Pods that kube-scheduler places
 * on kwok's Nodes and kwok runs to Ready, and KubeRay writes the `HeadPodReady`/`ready` state the
 * operator waits on. Two seams stay simulated, each because nothing here can play it:
 * - Serve, through the TEST-ONLY simulated Serve fleet (no Ray process runs in this suite; the
 *   operator reaches each cluster's "dashboard" through its address template);
 * - Gateway status, through the TEST-ONLY gateway status writer (no Gateway data plane runs).
 */
import { crdsOf, newestVersion } from '../../lib/crds/catalog';
import { resolveCrdFile } from '../../lib/crds/resolve';
import { KubeClient } from '../../lib/runtime/kube/client';
import { TestCluster, startTestCluster } from './cluster';
import { OperatorEnv, OperatorHarness, ReportedFailure, installRayshiftCrd, startOperatorOn } from './operator-env';
import { SimulatedServeDashboardOptions } from './serve-simulator';
import { simulateGatewayStatusWithoutDataPlane, startServeFleetWhereNoRayRuns } from './simulated-controllers';

/** An operator environment backed by the test cluster. */
export interface ClusterOperatorEnv extends OperatorEnv {
  /** The cluster (logs, Nodes, `printLogsOnFailure`). */
  readonly cluster: TestCluster;
}

/** Options of `startClusterOperatorEnv`. */
export interface ClusterOperatorOptions {
  /** Options of each cluster's simulated Serve dashboard. @default replicas start after 20 ms */
  readonly serve?: (namespace: string, cluster: string) => SimulatedServeDashboardOptions;
  /** Fake Nodes. @default 2 */
  readonly nodes?: number;
  /** Further kube-apiserver flags. @default none */
  readonly apiserverArgs?: readonly string[];
}

/**
 * Starts the test cluster with KubeRay and the Gateway API CRDs, installs the rayshift CRD and
 * starts the gateway status writer and the Serve fleet (no operator yet).
 */
export async function startClusterOperatorEnv(options: ClusterOperatorOptions = {}): Promise<ClusterOperatorEnv> {
  const gatewayCrds = await Promise.all(crdsOf('gateway-api', newestVersion('gateway-api')).map((c) => resolveCrdFile(c)));
  const cluster = await startTestCluster({ kuberay: true, nodes: options.nodes ?? 2, crds: gatewayCrds, ...(options.apiserverArgs ? { apiserverArgs: options.apiserverArgs } : {}) });
  const admin = KubeClient.fromKubeconfig(cluster.cp.kubeconfigPath);
  try {
    await installRayshiftCrd(cluster.cp, admin);
    const gatewayClient = KubeClient.fromKubeconfig(cluster.cp.kubeconfigPath, { fieldManager: 'simulated-gateway-status' });
    const gateway = simulateGatewayStatusWithoutDataPlane(gatewayClient);
    const fleet = await startServeFleetWhereNoRayRuns(options.serve ?? (() => ({ replicaStartDelayMs: 20 })));
    return {
      cluster,
      cp: cluster.cp,
      admin,
      fleet,
      async stop() {
        await gateway.stop();
        gatewayClient.close();
        await fleet.close();
        admin.close();
        await cluster.stop();
      },
    };
  } catch (e) {
    admin.close();
    await cluster.stop();
    throw e;
  }
}

/** `startClusterOperatorEnv` plus an in-process operator on it (as `startOperatorHarness`). */
export async function startClusterOperatorHarness(
  options: ClusterOperatorOptions & { failures?: ReportedFailure[] } = {},
): Promise<OperatorHarness & { env: ClusterOperatorEnv }> {
  const env = await startClusterOperatorEnv(options);
  const harness = await startOperatorOn(env, options.failures);
  return { ...harness, env };
}
