/**
 * The typed `UpgradeAnalysis`, from the engine's analysis status as the executor persisted it
 * (lib/engine/analysis-status.ts): a RayService's `status.engineState.analysis`, a RoleBasedGroup
 * coordination's `coordinations[].analysis`. Epoch-ms times become Timestamps, absent or malformed
 * fields their zero values. KubeRay runs no analysis: its status has none, so the message stays unset.
 */
import { create } from '@bufbuild/protobuf';
import { timestampFromMs, type Timestamp } from '@bufbuild/protobuf/wkt';
import { asArray, asObject, isObject } from '../../spec/read';
import {
  AnalysisMeasurementSchema,
  AnalysisMetricStatusSchema,
  AnalysisRunSchema,
  AnalysisVerdictSchema,
  UpgradeAnalysisSchema,
  type AnalysisMeasurement,
  type AnalysisRun,
  type UpgradeAnalysis,
} from '../gen/rayshift/v1/upgrade_pb';

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const int = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? Math.round(v) : 0);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const time = (v: unknown): Timestamp | undefined => (typeof v === 'number' && Number.isFinite(v) ? timestampFromMs(v) : undefined);

function measurementOf(raw: unknown): AnalysisMeasurement | undefined {
  if (!isObject(raw)) return undefined;
  return create(AnalysisMeasurementSchema, { time: time(raw.at), result: str(raw.result), value: num(raw.value), activeValue: num(raw.activeValue), message: str(raw.message) });
}

function runOf(r: unknown): AnalysisRun | undefined {
  if (!isObject(r)) return undefined;
  return create(AnalysisRunSchema, {
    id: str(r.id),
    kind: str(r.kind),
    cluster: str(r.cluster),
    pendingWeight: int(r.pendingWeight),
    startTime: time(r.startedAt),
    holdUntilTime: time(r.holdUntil),
    phase: str(r.phase),
    skipped: r.skipped === true,
    metrics: asArray(r.metrics).map(asObject).map((m) =>
      create(AnalysisMetricStatusSchema, {
        name: str(m.name),
        phase: str(m.phase),
        taken: int(m.taken),
        successes: int(m.successes),
        failures: int(m.failures),
        inconclusives: int(m.inconclusives),
        consecutiveSuccesses: int(m.consecutiveSuccesses),
        last: measurementOf(m.last),
      }),
    ),
  });
}

/** The analysis of an engine state (`status.engineState`), or undefined when it holds none. */
export function upgradeAnalysisOf(engineState: unknown): UpgradeAnalysis | undefined {
  return analysisFrom(asObject(engineState).analysis);
}

/** The typed form of an analysis status object itself, or undefined when `a` is none. */
export function analysisFrom(a: unknown): UpgradeAnalysis | undefined {
  if (!isObject(a)) return undefined;
  return create(UpgradeAnalysisSchema, {
    step: runOf(a.step),
    background: runOf(a.background),
    verdicts: asArray(a.verdicts).map(asObject).map((v) =>
      create(AnalysisVerdictSchema, { id: str(v.id), kind: str(v.kind), pendingWeight: int(v.pendingWeight), phase: str(v.phase), time: time(v.at), dryRun: v.dryRun === true, message: str(v.message) }),
    ),
  });
}
