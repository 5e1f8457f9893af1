/**
 * The test cluster of the suites that run the RoleBasedGroupRollout provider's operations in
 * process (what its dynamic provider runs during `pulumi up`; no Pulumi CLI): the clients they read
 * and apply with, and the kubeconfig text the provider's inputs carry.
 */
import * as fs from 'node:fs';
import { KubeClient } from '../../lib/runtime/kube/client';
import { ClusterOptions, startTestCluster, TestCluster } from './cluster';

/** What a Pulumi RoleBasedGroup suite works with; `stop` closes the clients, then the cluster. */
export interface PulumiRbgCluster {
  readonly cluster: TestCluster;
  /** Reads and creates as the test. */
  readonly admin: KubeClient;
  /** Applies the group as pulumi-kubernetes would, under a field manager of its own. */
  readonly applier: KubeClient;
  /** The kubeconfig's text, as a stack's provider inputs carry it. */
  readonly kubeconfig: string;
  stop(): Promise<void>;
}

/** Starts the test cluster with `options` and, when given, creates `namespace`. */
export async function startPulumiRbgCluster(options: ClusterOptions, namespace?: string): Promise<PulumiRbgCluster> {
  const cluster = await startTestCluster(options);
  const admin = KubeClient.fromKubeconfig(cluster.cp.kubeconfigPath);
  const applier = KubeClient.fromKubeconfig(cluster.cp.kubeconfigPath, { fieldManager: 'pulumi-kubernetes-test' });
  const kubeconfig = fs.readFileSync(cluster.cp.kubeconfigPath, 'utf8');
  if (namespace !== undefined) await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  return {
    cluster,
    admin,
    applier,
    kubeconfig,
    async stop() {
      admin.close();
      applier.close();
      await cluster.stop();
    },
  };
}
