/**
 * The end-to-end stack for executor `kuberay`: KubeRay itself runs the incremental upgrade.
 *
 * - REAL: the test cluster (test/support/cluster.ts: kube-apiserver + etcd, kube-controller-manager,
 *   kube-scheduler, kwok Nodes, KubeRay operator v1.7.0 with `--use-kubernetes-proxy`, so it reaches
 *   each head's dashboard through kube-apiserver's service proxy and Serve's health through its pod
 *   proxy); the Gateway API CRDs Traefik is built against, installed before KubeRay starts; two Ray
 *   heads (`ray start --head`) in network namespaces; Traefik as the Gateway controller of the
 *   Gateway and HTTPRoute KubeRay creates (an entry point on the listener port KubeRay writes, 80).
 * - TEST-ONLY simulated: the pod network (pod-network.ts), which makes a head Pod's IP reach a real
 *   Ray head.
 */
import * as path from 'node:path';
import { RayClusterSpecBuilder, type RayServiceProps } from '../../../lib/cdk8s';
import { KubeClient } from '../../../lib/runtime/kube/client';
import { KubeObject } from '../../../lib/runtime/kube/types';
import { startTestCluster, TestCluster } from '../../support/cluster';
import { waitFor } from '../../support/operator-env';
import { E2E_GATEWAY_CLASS, E2E_NAMESPACE, GATEWAYCLASS, chooseNetwork, startE2ERun, startHeads } from './e2e-env';
import { PodNetwork, simulatePodNetwork } from './pod-network';
import { RayAuth, RayHead } from './ray-head';
import { UpgradeParameters, e2eServeConfig } from './scenario';
import { RunningTraefik, TRAEFIK_CONTROLLER_NAME, startTraefik, traefikGatewayApiCrdFiles } from './traefik';

/** Listener port of the Gateway KubeRay creates for an incremental upgrade (`DefaultGatewayListenerPort`). */
export const KUBERAY_GATEWAY_PORT = 80;

/** Replicas of the test app's `Version` deployment at full capacity. */
export const KUBERAY_E2E_REPLICAS = 4;

/**
 * Props of the test app's RayService for executor `kuberay` (the cdk8s construct's and the Pulumi
 * component's): a head-only cluster (every Ray process that matters is a head, see
 * pod-network.ts) whose image tag names the app version, so each version is a new cluster spec
 * and KubeRay upgrades to a new cluster, with KubeRay's incremental options `p`.
 */
export function kubeRayServiceProps(name: string, version: string, p: UpgradeParameters): RayServiceProps {
  return {
    metadata: { name, namespace: E2E_NAMESPACE },
    executor: 'kuberay',
    rayClusterConfig: new RayClusterSpecBuilder({ image: `rayproject/ray:2.60.0-app-${version}`, rayVersion: '2.60.0', head: { resources: { cpu: '2', memory: '4Gi' } } }),
    serveConfig: e2eServeConfig(version, KUBERAY_E2E_REPLICAS),
    upgradeStrategy: {
      type: 'NewClusterWithIncrementalUpgrade',
      clusterUpgradeOptions: { maxSurgePercent: p.maxSurge, stepSizePercent: p.step, intervalSeconds: p.interval, gatewayClassName: E2E_GATEWAY_CLASS },
    },
    rayClusterDeletionDelaySeconds: 0,
  };
}

/** The running stack. */
export interface KubeRayE2EEnv {
  readonly cluster: TestCluster;
  readonly admin: KubeClient;
  readonly heads: readonly RayHead[];
  /** The simulated pod network; `pool.resolver` maps a RayCluster to its real head's dashboard. */
  readonly pool: PodNetwork;
  readonly traefik: RunningTraefik;
  readonly auth: RayAuth;
  /** Folder with events.log and Traefik's logs; kept after `stop()` (the cluster's logs are kept on failure). */
  readonly logDir: string;
  note(line: string): void;
  stop(): Promise<void>;
}

/** Starts the stack (see the file comment); on failure everything started is stopped again. */
export async function startKubeRayE2EEnv(options: { heads?: number } = {}): Promise<KubeRayE2EEnv> {
  const run = startE2ERun('rayshift-e2e-kuberay-');
  const { logDir, note, cleanups, stopAll } = run;
  try {
    const { network, why } = chooseNetwork();
    if (network !== 'netns') throw new Error(`the KubeRay end-to-end stack needs network namespaces for its pod network (${why})`);
    process.stdout.write(`[e2e] KubeRay stack; logs: ${logDir}\n`);
    // Heads first, then the cluster.
    const heads = await startHeads(run, ['a', 'b', 'c', 'd'].slice(0, options.heads ?? 2), network, { mode: 'disabled' });
    // KubeRay looks Gateways and HTTPRoutes up through its cache: their CRDs exist before it starts.
    const gatewayCrds = traefikGatewayApiCrdFiles().filter((f) => !f.includes('_vap_'));
    const cluster = await startTestCluster({ kuberay: true, nodes: 1, crds: gatewayCrds, kuberayArgs: ['--use-kubernetes-proxy'] });
    cleanups.push(() => cluster.stop());
    const admin = KubeClient.fromKubeconfig(cluster.cp.kubeconfigPath);
    cleanups.push(() => admin.close());

    const pool = simulatePodNetwork(admin, heads, { onEvent: (m) => note(`[simulated pod network] ${m}`) });
    cleanups.push(() => pool.stop());

    await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: E2E_NAMESPACE } });
    await admin.create({ ...GATEWAYCLASS, metadata: { name: E2E_GATEWAY_CLASS }, spec: { controllerName: TRAEFIK_CONTROLLER_NAME } } as KubeObject);
    const traefik = await startTraefik({
      kubeconfig: cluster.cp.kubeconfigPath,
      entryPoints: { web: KUBERAY_GATEWAY_PORT },
      logFile: path.join(logDir, 'traefik.log'),
      errorAccessLog: path.join(logDir, 'traefik-5xx.jsonl'),
    });
    cleanups.push(() => traefik.stop());
    await waitFor(async () => {
      const gc = await admin.tryGet(GATEWAYCLASS, E2E_GATEWAY_CLASS);
      return ((gc?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []).some((c) => c.type === 'Accepted' && c.status === 'True');
    }, `Traefik to accept GatewayClass ${E2E_GATEWAY_CLASS} (see ${traefik.logFile})`, 120_000, 250);
    note('GatewayClass accepted by Traefik');
    return { cluster, admin, heads, pool, traefik, auth: { mode: 'disabled' }, logDir, note, stop: stopAll };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
