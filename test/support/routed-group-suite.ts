/**
 * What every version-matched routing suite starts with: a test cluster with RBG's real controller
 * and the Gateway API CRDs, rayshift's RBG controller in this process, clients as the operator
 * (`admin`) and as a GitOps tool (`gitops`), and a directory with a Supervisor for the real
 * sglang-routers (kept with `RAYSHIFT_KEEP_SGLANG_ROUTER=1`). Test support, not the package's API.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { KubeClient } from '../../lib/runtime/kube/client';
import { RbgRolloutController } from '../../operator/rbg-controller';
import { startTestCluster } from './cluster';
import { upstreamCrdFiles } from './controlplane';
import { Supervisor } from './processes';
import type { GroupContext } from './rbg-operator-group';
import { requireSglangRouter } from './sglang-router';

const SILENT = { info: () => undefined, warn: () => undefined, debug: () => undefined, error: () => undefined };
const KEEP = 'RAYSHIFT_KEEP_SGLANG_ROUTER';

/** A started routed-group suite; `stop()` ends everything it started (the suite's own processes first). */
export interface RoutedGroupSuite {
  readonly ctx: GroupContext;
  readonly controller: RbgRolloutController;
  /** Where the routers log. */
  readonly dir: string;
  readonly supervisor: Supervisor;
  stop(): Promise<void>;
}

/** Starts the suite `name` (its router logs under `rayshift-<name>-*`) in `namespace`, its kwok Pods on `podNetwork` when given. */
export async function startRoutedGroupSuite(name: string, namespace: string, podNetwork?: string): Promise<RoutedGroupSuite> {
  requireSglangRouter();
  const gatewayApi = (await upstreamCrdFiles()).filter((f) => f.includes('gateway.networking.k8s.io_'));
  const cluster = await startTestCluster({ rbg: true, nodes: 2, crds: gatewayApi, ...(podNetwork ? { podNetwork } : {}) });
  const admin = KubeClient.fromKubeconfig(cluster.cp.kubeconfigPath);
  const gitops = KubeClient.fromKubeconfig(cluster.cp.kubeconfigPath, { fieldManager: 'gitops' });
  const ctx: GroupContext = { cluster, admin, gitops, namespace, watches: [] };
  const controller = new RbgRolloutController({ client: admin, log: SILENT });
  await controller.start();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `rayshift-${name}-`));
  const supervisor = new Supervisor(dir, KEEP);
  return {
    ctx,
    controller,
    dir,
    supervisor,
    stop: async () => {
      supervisor.release();
      for (const w of ctx.watches) w.stop();
      await controller.stop();
      admin.close();
      gitops.close();
      await cluster.stop();
      if (process.env[KEEP] !== '1') fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
