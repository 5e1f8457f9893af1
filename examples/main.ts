/** The examples app: `npm run synth` (or `npx cdk8s synth` after a build) writes each chart to dist/. */
import { App } from 'cdk8s';
import { loadKubeRayRayServiceCrd } from '../operator/chart/main';
import { buildGitOpsExample } from './gitops';
import { GrpcServiceChart } from './grpc-service';
import { LlmServiceChart } from './llm-service';
import { AffinityScheduledChart, PrefillDecodeChart } from './prefill-decode';
import { PrefillDecodeOperatorChart } from './prefill-decode-operator';

/** Builds every example chart into `app`. */
export function buildExamples(app: App): App {
  new LlmServiceChart(app, 'llm-service', { namespace: 'llm' });
  new GrpcServiceChart(app, 'grpc-service', { namespace: 'embeddings' });
  new PrefillDecodeChart(app, 'prefill-decode', { namespace: 'pd' });
  new AffinityScheduledChart(app, 'affinity-scheduled', { namespace: 'pd' });
  new PrefillDecodeOperatorChart(app, 'prefill-decode-operator', { namespace: 'pd' });
  return app;
}

/** Synthesizes every example, the GitOps one included (its operator chart embeds the rayshift CRD). */
async function main(): Promise<void> {
  const app = buildExamples(new App());
  buildGitOpsExample(app, await loadKubeRayRayServiceCrd());
  app.synth();
}

if (require.main === module) {
  main().catch((err: Error) => {
    process.stderr.write(`synth failed: ${err.message}\n`);
    process.exit(1);
  });
}
