/**
 * The `spec.rayshift.analysis` part of the rayshift CRD: its structural schema and the CEL rules
 * that reject, at admission and in `lib/spec`'s words, what `validateUpgradeAnalysis` rejects and
 * CEL can express (ranges, enums, exactly one of query and template, the URL's form). Placeholder
 * names and the warnings stay with the operator's validation.
 */
import { ANALYSIS_FAILURE_ACTIONS, MAX_ANALYSIS_METRICS } from '../spec/analysis';
import { ANALYSIS_TEMPLATE_NAMES } from '../spec/analysis-templates';
import { INT32_MAX, type JsonObject } from '../spec/read';
import type { CelRule } from './rayshift-crd';

const AT = 'spec.rayshift.analysis';
const quoted = (xs: readonly string[]) => xs.map((x) => `'${x}'`).join(', ');
const int = (description: string, minimum: number, maximum: number): JsonObject => ({ type: 'integer', format: 'int32', minimum, maximum, description });
const num = (description: string): JsonObject => ({ type: 'number', description });

/**
 * The CEL rules of the analysis by the schema node they sit on (paths as in `RAYSHIFT_CEL_RULES`).
 * Integer ranges are OpenAPI bounds instead: the API server's own message names the field and range.
 */
export const ANALYSIS_CEL_RULES: Readonly<Record<string, readonly CelRule[]>> = {
  [AT]: [
    {
      rule: "self.prometheusUrl.matches('^https?://[^/@?#]+(/[^?#]*)?$')",
      message: `${AT}.prometheusUrl must be an http:// or https:// URL without credentials, query string or fragment`,
      fieldPath: '.prometheusUrl',
    },
    {
      rule: `!has(self.onFailure) || self.onFailure in [${quoted(ANALYSIS_FAILURE_ACTIONS)}]`,
      message: `${AT}.onFailure is not a failure action; allowed: ${ANALYSIS_FAILURE_ACTIONS.join(', ')}`,
      fieldPath: '.onFailure',
    },
    {
      rule: '!has(self.beforeEachStep) || self.beforeEachStep || (has(self.background) && self.background)',
      message: `${AT}.beforeEachStep is false and background is not true: the analysis would never measure; set one of them`,
      fieldPath: '.beforeEachStep',
    },
  ],
  [`${AT}.metrics[*]`]: [
    { rule: "self.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')", message: `${AT}.metrics[*].name must be a DNS label`, fieldPath: '.name' },
    { rule: 'has(self.query) != has(self.template)', message: `${AT}.metrics[*] needs exactly one of query and template` },
    {
      rule: `!has(self.template) || self.template in [${quoted(ANALYSIS_TEMPLATE_NAMES)}]`,
      message: `${AT}.metrics[*].template is not a template; allowed: ${ANALYSIS_TEMPLATE_NAMES.join(', ')}`,
      fieldPath: '.template',
    },
    { rule: '!has(self.quantile) || (self.quantile > 0.0 && self.quantile < 1.0)', message: `${AT}.metrics[*].quantile must be a number between 0 and 1 (exclusive)`, fieldPath: '.quantile' },
  ],
  [`${AT}.metrics[*].successCondition`]: [
    {
      rule: 'has(self.maximum) || has(self.minimum) || has(self.maxAboveActive) || has(self.maxAboveActivePercent)',
      message: `${AT}.metrics[*].successCondition needs at least one of maximum, minimum, maxAboveActive, maxAboveActivePercent`,
    },
  ],
};

/** The JSON schema of `spec.rayshift.analysis` (its CEL rules are added by path, from `ANALYSIS_CEL_RULES`). */
export function analysisSchema(): JsonObject {
  return {
    type: 'object',
    description: 'Measure the new cluster in Prometheus while it takes traffic; hold, pause or roll back on the verdicts (NewClusterWithIncrementalUpgrade only).',
    required: ['prometheusUrl', 'metrics'],
    properties: {
      prometheusUrl: { type: 'string', maxLength: 2048, description: 'The Prometheus to query (http:// or https://); no other address is called.' },
      metrics: {
        type: 'array',
        minItems: 1,
        maxItems: MAX_ANALYSIS_METRICS,
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
        description: 'The metrics; every one must pass.',
        items: {
          type: 'object',
          required: ['name', 'successCondition'],
          properties: {
            name: { type: 'string', maxLength: 63 },
            query: { type: 'string', maxLength: 8192, description: 'PromQL returning one number; placeholders {{namespace}}, {{service}}, {{cluster}}, {{window}}.' },
            template: { type: 'string', maxLength: 64, description: `A built-in query: ${ANALYSIS_TEMPLATE_NAMES.join(', ')}.` },
            quantile: num('Quantile of the latency templates, in (0, 1). Default 0.99.'),
            successCondition: {
              type: 'object',
              properties: {
                maximum: num('The new cluster\'s value must be at most this.'),
                minimum: num('The new cluster\'s value must be at least this.'),
                maxAboveActive: { ...num('The new cluster\'s value may exceed the old cluster\'s by at most this much, ≥ 0.'), minimum: 0 },
                maxAboveActivePercent: { ...num('The new cluster\'s value may exceed the old cluster\'s by at most this percentage, ≥ 0.'), minimum: 0 },
              },
            },
            intervalSeconds: int('Seconds between measurements. Default 30.', 1, INT32_MAX),
            windowSeconds: int('Range of {{window}} in seconds. Default intervalSeconds.', 1, INT32_MAX),
            count: int('Measurements per gate. Default 1.', 1, 1000),
            failureLimit: int('Failed measurements allowed. Default 0.', 0, 1000),
            inconclusiveLimit: int('Inconclusive measurements allowed. Default 0.', 0, 1000),
            consecutiveSuccessLimit: int('Successes in a row that pass the metric early; 0 turns it off. Default 0.', 0, 1000),
          },
        },
      },
      beforeEachStep: { type: 'boolean', description: 'Gate every traffic step after the first, and the promotion. Default true.' },
      background: { type: 'boolean', description: 'Also measure from the first traffic step until promotion. Default false.' },
      holds: {
        type: 'array',
        maxItems: 20,
        description: 'Weights to stay at longer, measured throughout.',
        items: {
          type: 'object',
          required: ['weightPercent', 'seconds'],
          properties: { weightPercent: int('New-cluster weight, 1–100.', 1, 100), seconds: int('Seconds to stay at least.', 1, INT32_MAX) },
        },
      },
      onFailure: { type: 'string', maxLength: 16, description: 'rollback (stepwise), abort (all traffic back at once) or pause. Default rollback.' },
      dryRun: { type: 'boolean', description: 'Record every verdict without acting on any. Default false.' },
      queryTimeoutSeconds: int('Seconds a query may take before its measurement is inconclusive, 1–300. Default 10.', 1, 300),
      clusterLabel: { type: 'string', maxLength: 128, description: 'Prometheus label carrying the RayCluster name (Ray Serve templates). Default ray_io_cluster.' },
    },
  };
}
