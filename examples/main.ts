/**
 * The examples app: `npm run synth` (or `npx cdk8s synth` after a build) writes each chart to dist/.
 * Synthesis reads nothing and needs no network (the operator chart's CRD is generated at
 * `npm run import` time); test/cdk8s/offline-synth.test.ts runs it without either.
 */
import { App } from 'cdk8s';
import { buildGitOpsExample } from './gitops';
import { GrpcServiceChart } from './grpc-service';
import { LlmServiceChart } from './llm-service';
import { OpenAiGatewayChart } from './openai-gateway';
import { AffinityScheduledChart, PrefillDecodeChart } from './prefill-decode';
import { PrefillDecodeOperatorChart } from './prefill-decode-operator';
import { PrefillDecodeRoutedChart } from './prefill-decode-routed';
import { PrefillDecodeWarmupChart } from './prefill-decode-warmup';
import { ShrinkFirstServiceChart } from './shrink-first';

/** Builds every example chart but the GitOps pair (`buildGitOpsExample`) into `app`. */
export function buildExamples(app: App): App {
  new LlmServiceChart(app, 'llm-service', { namespace: 'llm' });
  new GrpcServiceChart(app, 'grpc-service', { namespace: 'embeddings' });
  new PrefillDecodeChart(app, 'prefill-decode', { namespace: 'pd' });
  new AffinityScheduledChart(app, 'affinity-scheduled', { namespace: 'pd' });
  new PrefillDecodeOperatorChart(app, 'prefill-decode-operator', { namespace: 'pd' });
  new PrefillDecodeWarmupChart(app, 'prefill-decode-warmup', { namespace: 'pd' });
  new PrefillDecodeRoutedChart(app, 'prefill-decode-routed', { namespace: 'pd' });
  new OpenAiGatewayChart(app, 'openai-gateway', { namespace: 'openai' });
  new ShrinkFirstServiceChart(app, 'shrink-first', { namespace: 'llm-tight' });
  return app;
}

/** Builds everything `npm run synth` writes: the service examples and the GitOps one (operator chart included). */
export function buildExampleApp(app: App): App {
  return buildGitOpsExample(buildExamples(app));
}

if (require.main === module) {
  try {
    buildExampleApp(new App()).synth();
  } catch (err) {
    process.stderr.write(`synth failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
}
