/**
 * The analysis options of a RayService (`spec.rayshift.analysis`, the model's `UpgradeAnalysis` in
 * lib/spec/analysis.ts) to and from the `AnalysisOptions` message. An option left out stays out
 * both ways (no default is filled in), so a spec the model accepts round-trips unchanged; enums
 * carry the model's names. The analysis *status* is ./analysis.ts.
 */
import { create, type DescEnum, type MessageInitShape } from '@bufbuild/protobuf';
import { ANALYSIS_FAILURE_ACTIONS } from '../../spec/analysis';
import { ANALYSIS_TEMPLATE_NAMES } from '../../spec/analysis-templates';
import { JsonObject, asArray, asObject, isInteger, isObject } from '../../spec/read';
import {
  AnalysisFailureActionSchema,
  AnalysisOptionsSchema,
  AnalysisTemplateSchema,
  type AnalysisMetricSpec,
  type AnalysisMetricSpecSchema,
  type AnalysisOptions,
} from '../gen/rayshift/v1/rayservice_pb';
import type { TypedShape } from './json-merge';

/** The analysis fields `AnalysisOptions` carries, in CRD spelling (the typed part of `spec.rayshift.analysis`). */
export const ANALYSIS_SHAPE: TypedShape = {
  prometheusUrl: true,
  metrics: {
    name: true,
    query: true,
    template: true,
    quantile: true,
    successCondition: { maximum: true, minimum: true, maxAboveActive: true, maxAboveActivePercent: true },
    intervalSeconds: true,
    windowSeconds: true,
    count: true,
    failureLimit: true,
    inconclusiveLimit: true,
    consecutiveSuccessLimit: true,
  },
  beforeEachStep: true,
  background: true,
  holds: { weightPercent: true, seconds: true },
  onFailure: true,
  dryRun: true,
  queryTimeoutSeconds: true,
  clusterLabel: true,
};

/** An enum's values paired with the model's names (`ray-serve-error-ratio` ↔ `RAY_SERVE_ERROR_RATIO`); throws if the proto lacks one. */
function enumNames(schema: DescEnum, names: readonly string[]): { readonly name: ReadonlyMap<number, string>; readonly value: ReadonlyMap<string, number> } {
  const pairs = names.map((n): [number, string] => {
    const v = schema.values.find((e) => e.localName === n.toUpperCase().replace(/-/g, '_'));
    if (!v) throw new Error(`${schema.typeName} has no value for ${n}`);
    return [v.number, n];
  });
  return { name: new Map(pairs), value: new Map(pairs.map(([v, n]) => [n, v])) };
}

const TEMPLATES = enumNames(AnalysisTemplateSchema, ANALYSIS_TEMPLATE_NAMES);
const FAILURE_ACTIONS = enumNames(AnalysisFailureActionSchema, ANALYSIS_FAILURE_ACTIONS);

/** `o` without its undefined values. */
function compact(o: JsonObject): JsonObject {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

const int = (v: unknown): number | undefined => (isInteger(v) ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);
const bool = (v: unknown): boolean | undefined => (typeof v === 'boolean' ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

function metricToKube(m: AnalysisMetricSpec): JsonObject {
  const c = m.successCondition;
  return compact({
    name: m.name,
    query: m.query,
    template: TEMPLATES.name.get(m.template),
    quantile: m.quantile,
    successCondition: c && compact({ maximum: c.maximum, minimum: c.minimum, maxAboveActive: c.maxAboveActive, maxAboveActivePercent: c.maxAboveActivePercent }),
    intervalSeconds: m.intervalSeconds,
    windowSeconds: m.windowSeconds,
    count: m.count,
    failureLimit: m.failureLimit,
    inconclusiveLimit: m.inconclusiveLimit,
    consecutiveSuccessLimit: m.consecutiveSuccessLimit,
  });
}

/** `spec.rayshift.analysis` of an `AnalysisOptions` (unset options left out). */
export function analysisToKube(a: AnalysisOptions): JsonObject {
  return compact({
    prometheusUrl: a.prometheusUrl,
    metrics: a.metrics.map(metricToKube),
    beforeEachStep: a.beforeEachStep,
    background: a.background,
    holds: a.holds.length > 0 ? a.holds.map((h) => ({ weightPercent: h.weightPercent, seconds: h.seconds })) : undefined,
    onFailure: FAILURE_ACTIONS.name.get(a.onFailure),
    dryRun: a.dryRun,
    queryTimeoutSeconds: a.queryTimeoutSeconds,
    clusterLabel: a.clusterLabel,
  });
}

function metricFromKube(m: JsonObject): MessageInitShape<typeof AnalysisMetricSpecSchema> {
  const c = m.successCondition;
  return {
    name: str(m.name) ?? '',
    query: str(m.query),
    template: TEMPLATES.value.get(str(m.template) ?? ''),
    quantile: num(m.quantile),
    successCondition: isObject(c) ? { maximum: num(c.maximum), minimum: num(c.minimum), maxAboveActive: num(c.maxAboveActive), maxAboveActivePercent: num(c.maxAboveActivePercent) } : undefined,
    intervalSeconds: int(m.intervalSeconds),
    windowSeconds: int(m.windowSeconds),
    count: int(m.count),
    failureLimit: int(m.failureLimit),
    inconclusiveLimit: int(m.inconclusiveLimit),
    consecutiveSuccessLimit: int(m.consecutiveSuccessLimit),
  };
}

/** The `AnalysisOptions` of `spec.rayshift.analysis` (fields of the wrong type are left unset). */
export function analysisFromKube(raw: unknown): AnalysisOptions {
  const a = asObject(raw);
  return create(AnalysisOptionsSchema, {
    prometheusUrl: str(a.prometheusUrl) ?? '',
    metrics: asArray(a.metrics).map(asObject).map(metricFromKube),
    beforeEachStep: bool(a.beforeEachStep),
    background: bool(a.background),
    holds: asArray(a.holds).map(asObject).map((h) => ({ weightPercent: int(h.weightPercent) ?? 0, seconds: int(h.seconds) ?? 0 })),
    onFailure: FAILURE_ACTIONS.value.get(str(a.onFailure) ?? ''),
    dryRun: bool(a.dryRun),
    queryTimeoutSeconds: int(a.queryTimeoutSeconds),
    clusterLabel: str(a.clusterLabel),
  });
}
