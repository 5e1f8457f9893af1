/**
 * The `spec.rayshift.analysis` part of the rayshift CRD: its structural schema and the CEL rules
 * that reject, at admission and in `lib/spec`'s words, what `validateUpgradeAnalysis` rejects and
 * CEL can express (ranges, enums, exactly one of query and template, the URL's form). Placeholder
 * names and the warnings stay with the operator's validation.
 */
import { ANALYSIS_DEFAULTS, ANALYSIS_FAILURE_ACTIONS, MAX_ANALYSIS_METRICS } from '../spec/analysis';
import { describeDefault } from './describe-default';
import { ANALYSIS_TEMPLATE_NAMES } from '../spec/analysis-templates';
import { INT32_MAX, type JsonObject } from '../spec/read';
import type { CelRule } from './cel-rule';

const AT = 'spec.rayshift.analysis';
const quoted = (xs: readonly string[]) => xs.map((x) => `'${x}'`).join(', ');
const int = (description: string, minimum: number, maximum: number): JsonObject => ({ type: 'integer', format: 'int32', minimum, maximum, description });
/** A field's description ending in its default, taken from `ANALYSIS_DEFAULTS` (the one table of them). */
const withDefault = (description: string, field: keyof typeof ANALYSIS_DEFAULTS): string => describeDefault(description, ANALYSIS_DEFAULTS[field]);
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
            quantile: num(withDefault('Quantile of the latency templates, in (0, 1).', 'quantile')),
            successCondition: {
              type: 'object',
              properties: {
                maximum: num('The new cluster\'s value must be at most this.'),
                minimum: num('The new cluster\'s value must be at least this.'),
                maxAboveActive: { ...num('The new cluster\'s value may exceed the old cluster\'s by at most this much, ≥ 0.'), minimum: 0 },
                maxAboveActivePercent: { ...num('The new cluster\'s value may exceed the old cluster\'s by at most this percentage, ≥ 0.'), minimum: 0 },
              },
            },
            intervalSeconds: int(withDefault('Seconds between measurements.', 'intervalSeconds'), 1, INT32_MAX),
            windowSeconds: int('Range of {{window}} in seconds. Default intervalSeconds.', 1, INT32_MAX),
            count: int(withDefault('Measurements per gate.', 'count'), 1, 1000),
            failureLimit: int(withDefault('Failed measurements allowed.', 'failureLimit'), 0, 1000),
            inconclusiveLimit: int(withDefault('Inconclusive measurements allowed.', 'inconclusiveLimit'), 0, 1000),
            consecutiveSuccessLimit: int(withDefault('Successes in a row that pass the metric early; 0 turns it off.', 'consecutiveSuccessLimit'), 0, 1000),
          },
        },
      },
      beforeEachStep: { type: 'boolean', description: withDefault('Gate every traffic step after the first, and the promotion.', 'beforeEachStep') },
      background: { type: 'boolean', description: withDefault('Also measure from the first traffic step until promotion.', 'background') },
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
      onFailure: { type: 'string', maxLength: 16, description: withDefault('rollback (stepwise), abort (all traffic back at once) or pause.', 'onFailure') },
      dryRun: { type: 'boolean', description: withDefault('Record every verdict without acting on any.', 'dryRun') },
      queryTimeoutSeconds: int(withDefault('Seconds a query may take before its measurement is inconclusive, 1–300.', 'queryTimeoutSeconds'), 1, 300),
      clusterLabel: { type: 'string', maxLength: 128, description: withDefault('Prometheus label carrying the RayCluster name (Ray Serve templates).', 'clusterLabel') },
    },
  };
}
