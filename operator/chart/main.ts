/**
 * Synthesizes the operator's install chart: `npx tsx operator/chart/main.ts [outdir]` writes
 * `<outdir>/rayshift-operator.k8s.yaml` (default outdir `dist/operator`). The rayshift CRD is built
 * from the newest supported KubeRay RayService CRD, resolved from ../shared/crds or its pinned URL.
 */
import { App } from 'cdk8s';
import * as fs from 'node:fs';
import { parse } from 'yaml';
import { crdsOf, newestVersion } from '../../lib/crds/catalog';
import { resolveCrdFile } from '../../lib/crds/resolve';
import { OperatorChart, OperatorChartProps } from './operator-chart';

/** Reads KubeRay's RayService CRD of a supported release (default the newest). */
export async function loadKubeRayRayServiceCrd(version = newestVersion('kuberay')): Promise<unknown> {
  const pinned = crdsOf('kuberay', version).find((c) => c.file === 'ray.io_rayservices.yaml');
  if (!pinned) throw new Error(`KubeRay ${version} has no RayService CRD`);
  return parse(fs.readFileSync(await resolveCrdFile(pinned), 'utf8'), { maxAliasCount: -1 });
}

/** Synthesizes the chart into `outdir` and returns the multi-document YAML. */
export async function synthOperatorChart(outdir = 'dist/operator', props: Partial<OperatorChartProps> = {}): Promise<string> {
  const app = new App({ outdir });
  new OperatorChart(app, 'rayshift-operator', { kubeRayRayServiceCrd: await loadKubeRayRayServiceCrd(), ...props });
  app.synth();
  return app.synthYaml();
}

if (require.main === module) {
  synthOperatorChart(process.argv[2]).then(
    () => process.stdout.write(`wrote ${process.argv[2] ?? 'dist/operator'}/rayshift-operator.k8s.yaml\n`),
    (e: unknown) => {
      process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
      process.exit(1);
    },
  );
}
