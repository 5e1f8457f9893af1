/**
 * The harness of the RBG v0.8 integration tests (rbg-rollout-v08, rbg-warmup-v08): a real
 * kube-apiserver with RBG v0.8.0-alpha.5's CRDs, one namespace, the TEST-ONLY simulated RBG
 * controller on RoleInstanceSets (no v0.8 controller builds here), optionally the test-only webhook
 * with v0.8's rules, and rayshift's RBG executor (`RbgRolloutController`) in process. Needs
 * `npm run controlplane:build`.
 */
import { crdsOf } from '../../lib/crds/catalog';
import { resolveCrdFile } from '../../lib/crds/resolve';
import { KubeClient } from '../../lib/runtime/kube/client';
import { RBG_V1ALPHA2_TYPE, ROLE_INSTANCE_SET_TYPE } from '../../lib/spec/object-names';
import { RbgRolloutController } from '../../operator/rbg-controller';
import { ControlPlane, startControlPlane } from './controlplane';
import { SimulatedRbgWebhook, startRbgWebhook } from './rbg-webhook';
import { SimulatedRbgController, simulateUnbuildableRbgRelease } from './simulated-rbg';

/** What the tests drive and inspect. */
export interface RbgV08Env {
  readonly cp: ControlPlane;
  /** Cluster-admin client (what the operator uses too). */
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
  /** How long the simulated controller takes to make an updated replica of `role` ready, ms. */
  readonly readyDelayMs: (group: string, role: string) => number;
}

const SILENT = { info: () => undefined, warn: () => undefined, debug: () => undefined, error: () => undefined };

/** Starts the control plane, the namespace, the simulated controller (and webhook) and the executor. */
export async function startRbgV08Env(opts: RbgV08EnvOptions): Promise<RbgV08Env> {
  const cp = await startControlPlane({ crds: await Promise.all(crdsOf('rbg', 'v0.8.0-alpha.5').map((c) => resolveCrdFile(c))) });
  const admin = KubeClient.fromKubeconfig(cp.kubeconfigPath);
  const gitops = KubeClient.fromKubeconfig(cp.kubeconfigPath, { fieldManager: 'gitops' });
  let webhook: SimulatedRbgWebhook | undefined;
  let simulator: SimulatedRbgController | undefined;
  let controller: RbgRolloutController | undefined;
  const stop = async () => {
    await controller?.stop();
    await simulator?.stop();
    await webhook?.stop();
    admin.close();
    gitops.close();
    await cp.stop();
  };
  try {
    await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: opts.namespace } });
    if (opts.webhook) webhook = await startRbgWebhook(admin, opts.namespace);
    simulator = simulateUnbuildableRbgRelease(admin, { type: RBG_V1ALPHA2_TYPE, workloads: ROLE_INSTANCE_SET_TYPE, readyDelayMs: opts.readyDelayMs });
    controller = new RbgRolloutController({ client: admin, log: SILENT });
    await controller.start();
  } catch (e) {
    await stop();
    throw e;
  }
  return { cp, admin, gitops, webhook, stop };
}
