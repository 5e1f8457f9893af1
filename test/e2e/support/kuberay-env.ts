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
import { RayClusterSpecBuilder, type RayServiceProps } from '../../../lib/cdk8s';
import { E2E_GATEWAY_CLASS, E2E_NAMESPACE, HeadsOnCluster, startE2ERun, startHeadsOnCluster } from './e2e-env';
import { RayAuth } from './ray-head';
import { UpgradeParameters, e2eServeConfig } from './scenario';

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

/** The running stack (`pool.resolver` maps a RayCluster to its real head's dashboard). */
export interface KubeRayE2EEnv extends HeadsOnCluster {
  readonly auth: RayAuth;
  /** Folder with events.log, Traefik's logs and the cluster's processes' under `cluster/`; kept after `stop()`. */
  readonly logDir: string;
  note(line: string): void;
  stop(): Promise<void>;
}

/** Starts the stack (see the file comment); on failure everything started is stopped again. */
export async function startKubeRayE2EEnv(options: { heads?: number } = {}): Promise<KubeRayE2EEnv> {
  const run = startE2ERun('rayshift-e2e-kuberay-');
  try {
    process.stdout.write(`[e2e] KubeRay stack; logs: ${run.logDir}\n`);
    const auth: RayAuth = { mode: 'disabled' };
    const stack = await startHeadsOnCluster(run, { heads: options.heads ?? 2, auth, kuberayArgs: ['--use-kubernetes-proxy'], entryPoints: { web: KUBERAY_GATEWAY_PORT } });
    return { ...stack, auth, logDir: run.logDir, note: run.note, stop: run.stopAll };
  } catch (err) {
    await run.stopAll();
    throw err;
  }
}
