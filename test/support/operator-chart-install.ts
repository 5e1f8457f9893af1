/**
 * The operator's install chart on a test cluster, as its users install it: every object but the
 * CRDs (the environment installed those) created as the admin, and a kubeconfig holding the
 * operator ServiceAccount's token, so that a test runs the operator with exactly the chart's RBAC.
 */
import { Testing } from 'cdk8s';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse, stringify } from 'yaml';
import { crdsOf } from '../../lib/crds/catalog';
import { resolveCrdFile } from '../../lib/crds/resolve';
import { OPERATOR_NAME, OPERATOR_NAMESPACE, OperatorChart, OperatorChartProps } from '../../operator/chart/operator-chart';
import type { OperatorEnv } from './operator-env';
import { collectionPath } from './rest-paths';

/** What `installOperatorChart` created. */
export interface InstalledChart {
  /** Every object the chart synthesized, CRDs included. */
  readonly objects: any[];
  /** The operator ServiceAccount's token. */
  readonly token: string;
  /** A kubeconfig file (mode 0600) with that token, in the operator's namespace. */
  readonly kubeconfig: string;
}

/**
 * Synthesizes the chart with `props` (the KubeRay v1.7.0 RayService CRD the environment built the
 * installed rayshift CRD from is added), creates its non-CRD objects and writes the operator's
 * kubeconfig into `dir`.
 */
export async function installOperatorChart(env: OperatorEnv, dir: string, props: Partial<OperatorChartProps> = {}): Promise<InstalledChart> {
  const file = await resolveCrdFile(crdsOf('kuberay', 'v1.7.0').find((c) => c.file === 'ray.io_rayservices.yaml')!);
  const objects = Testing.synth(new OperatorChart(Testing.app(), 'op', { kubeRayRayServiceCrd: parse(fs.readFileSync(file, 'utf8'), { maxAliasCount: -1 }), ...props }));
  for (const o of objects.filter((x) => x.kind !== 'CustomResourceDefinition')) {
    const r = await env.cp.request('POST', collectionPath(o), o);
    if (r.status !== 201) throw new Error(`creating ${o.kind} ${o.metadata.name}: HTTP ${r.status}: ${r.body?.message}`);
  }
  const token = await env.cp.serviceAccountToken(OPERATOR_NAMESPACE, OPERATOR_NAME);
  // The admin kubeconfig with the ServiceAccount's token instead of the admin's.
  const kc = parse(fs.readFileSync(env.cp.kubeconfigPath, 'utf8'));
  kc.users[0].user = { token };
  kc.contexts[0].context.namespace = OPERATOR_NAMESPACE;
  const kubeconfig = path.join(dir, 'operator-sa-kubeconfig');
  fs.writeFileSync(kubeconfig, stringify(kc), { mode: 0o600 });
  return { objects, token, kubeconfig };
}
