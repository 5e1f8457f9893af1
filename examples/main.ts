/** The examples app: `npm run synth` (or `npx cdk8s synth` after a build) writes each chart to dist/. */
import { App } from 'cdk8s';
import { GrpcServiceChart } from './grpc-service';
import { LlmServiceChart } from './llm-service';
import { AffinityScheduledChart, PrefillDecodeChart } from './prefill-decode';

/** Builds every example chart into `app`. */
export function buildExamples(app: App): App {
  new LlmServiceChart(app, 'llm-service', { namespace: 'llm' });
  new GrpcServiceChart(app, 'grpc-service', { namespace: 'embeddings' });
  new PrefillDecodeChart(app, 'prefill-decode', { namespace: 'pd' });
  new AffinityScheduledChart(app, 'affinity-scheduled', { namespace: 'pd' });
  return app;
}

if (require.main === module) {
  buildExamples(new App()).synth();
}
