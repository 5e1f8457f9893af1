/**
 * The harness of the RBG v0.8 integration test that needs no RBG controller (rbg-rollout-v08): a
 * real kube-apiserver with RBG v0.8.0-alpha.5's CRDs, one namespace and, optionally, the test-only
 * webhook with v0.8's rules. Rollouts on v0.8 run on its real controller and webhook in the cluster
 * suites (cluster-rbg-v08-webhook, cluster-rbg-warmup-v08, cluster-rbg-analysis). Needs
 * `npm run controlplane:build`.
 */
import { crdsOf } from '../../lib/crds/catalog';
import { resolveCrdFile } from '../../lib/crds/resolve';
import { KubeClient } from '../../lib/runtime/kube/client';
import { ControlPlane, startControlPlane } from './controlplane';
import { SimulatedRbgWebhook, startRbgWebhook } from './rbg-webhook';

/** What the tests drive and inspect. */
export interface RbgV08Env {
  readonly cp: ControlPlane;
  /** Cluster-admin client. */
  readonly admin: KubeClient;
  /** A client with field manager `gitops`, for the user's applies. */
  readonly gitops: KubeClient;
  /** The webhook's recorded reviews, when started with `webhook: true`. */
  readonly webhook?: SimulatedRbgWebhook;
  stop(): Promise<void>;
}

/** Options of `startRbgV08Env`. */
export interface RbgV08EnvOptions {
  readonly namespace: string;
  /** Run the test-only webhook with RBG v0.8's admission rules. @default false */
  readonly webhook?: boolean;
}

/** Starts the control plane, the namespace and, when asked, the webhook. */
export async function startRbgV08Env(opts: RbgV08EnvOptions): Promise<RbgV08Env> {
  const cp = await startControlPlane({ crds: await Promise.all(crdsOf('rbg', 'v0.8.0-alpha.5').map((c) => resolveCrdFile(c))) });
  const admin = KubeClient.fromKubeconfig(cp.kubeconfigPath);
  const gitops = KubeClient.fromKubeconfig(cp.kubeconfigPath, { fieldManager: 'gitops' });
  let webhook: SimulatedRbgWebhook | undefined;
  const stop = async () => {
    await webhook?.stop();
    admin.close();
    gitops.close();
    await cp.stop();
  };
  try {
    await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: opts.namespace } });
    if (opts.webhook) webhook = await startRbgWebhook(admin, opts.namespace);
  } catch (e) {
    await stop();
    throw e;
  }
  return { cp, admin, gitops, webhook, stop };
}
