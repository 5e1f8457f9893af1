/**
 * Synthesizes the operator's install chart: `npx tsx operator/chart/main.ts [outdir]` (or
 * `node build/operator/chart/main.js [outdir]`) writes `<outdir>/rayshift-operator.k8s.yaml`
 * (default outdir `dist/operator`). It reads nothing: the rayshift CRD is the generated one.
 */
import { App } from 'cdk8s';
import { OperatorChart, OperatorChartProps } from './operator-chart';

/** Synthesizes the chart into `outdir` and returns the multi-document YAML. */
export function synthOperatorChart(outdir = 'dist/operator', props: OperatorChartProps = {}): string {
  const app = new App({ outdir });
  new OperatorChart(app, 'rayshift-operator', props);
  app.synth();
  return app.synthYaml();
}

if (require.main === module) {
  try {
    synthOperatorChart(process.argv[2]);
    process.stdout.write(`wrote ${process.argv[2] ?? 'dist/operator'}/rayshift-operator.k8s.yaml\n`);
  } catch (e) {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  }
}
