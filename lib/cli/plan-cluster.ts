/**
 * `rayshift plan --cluster`: the plan of the files, plus, for each RayService, the capacity
 * preflight of an upgrade started now on the live cluster (read through a kubeconfig): every
 * Node, every bound Pod, the namespace's ResourceQuotas and LimitRanges, and the serving cluster
 * of the service when it exists there (its Pods are what the old side gives back).
 */
import { preflightUpgrade } from '../engine/capacity-demand';
import { planRayService, type RayServicePlan } from '../engine/plan-rayservice';
import { clusterShape } from '../spec/raycluster';
import { listCapacity } from '../runtime/capacity';
import type { KubeClient } from '../runtime/kube/client';
import { RAYSHIFT_RAYSERVICE } from '../spec/object-names';
import { RayServiceSpec, resolveUpgradeOptions } from '../spec/rayservice';
import { asObject } from '../spec/read';
import { EXIT, Output, planFiles, printPlans } from './commands';
import type { CheckOptions } from './documents';
import { identity } from './documents';
import type { CliPlan, PlanCapacity } from './plan-documents';
import { clientFor, type KubeconfigOptions } from './status-command';

/** Options of `plan --cluster`. */
export interface PlanClusterOptions extends KubeconfigOptions {
  /** Namespace of documents that name none. @default the kubeconfig context's, else `default` */
  readonly namespace?: string;
}

/** Plans `files` and adds each RayService's capacity on the live cluster; exit 1 when the cluster cannot be read. */
export async function planClusterCommand(files: readonly string[], json: boolean, io: Output, kube: PlanClusterOptions, options: CheckOptions = {}, failAtRound?: number): Promise<number> {
  const planned = planFiles(files, io, options, failAtRound);
  if (planned.failed) return printPlans(planned, json, io);
  const client = clientFor(kube, io);
  if (client === undefined) return EXIT.invalid;
  try {
    const services = planned.documents.filter((d) => identity(d).kind === 'RayService');
    let i = 0;
    const plans: CliPlan[] = [];
    for (const p of planned.plans) {
      if (p.kind !== 'RayService') {
        plans.push(p);
        continue;
      }
      const doc = services[i++];
      const namespace = identity(doc).namespace || kube.namespace || client.namespace || 'default';
      const spec = asObject(doc.manifest.spec) as unknown as RayServiceSpec;
      const capacity = await capacityOf(client, namespace, identity(doc).name, spec);
      plans.push({ ...p, ...shrinkFirstPlan(identity(doc).name, spec, capacity), capacity });
    }
    return printPlans({ ...planned, plans }, json, io);
  } catch (e) {
    io.err(`${io.errStyle.red('error:')} reading the cluster's capacity: ${(e as Error).message}\n`);
    return EXIT.invalid;
  } finally {
    client.close();
  }
}

/** Under capacityPolicy shrinkFirst the live preflight decides the plan (surge, zero surge, or refused): that plan; nothing to replace otherwise. */
function shrinkFirstPlan(name: string, spec: RayServiceSpec, capacity: PlanCapacity): RayServicePlan | undefined {
  const options = resolveUpgradeOptions(spec);
  if (options.capacityPolicy !== 'shrinkFirst' || capacity.outcome === undefined) return undefined;
  return planRayService({ kind: 'RayService', name, options, cluster: clusterShape(spec.rayClusterConfig), capacity: capacity.outcome });
}

async function capacityOf(client: KubeClient, namespace: string, name: string, spec: RayServiceSpec): Promise<PlanCapacity> {
  const live = await client.tryGet(RAYSHIFT_RAYSERVICE, name, namespace);
  const activeCluster = asObject(asObject(live?.status).engineState).activeClusterName;
  const active = typeof activeCluster === 'string' ? activeCluster : undefined;
  const verdict = preflightUpgrade(spec.rayClusterConfig, resolveUpgradeOptions(spec), await listCapacity(client, namespace), active);
  return {
    namespace,
    ...(active !== undefined ? { activeCluster: active } : {}),
    ...(verdict === undefined ? { message: 'not checked: the cluster shows no Node' } : { outcome: verdict.outcome, ...(verdict.message !== undefined ? { message: verdict.message } : {}) }),
  };
}
