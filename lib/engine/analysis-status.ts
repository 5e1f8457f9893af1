/**
 * The analysis part of the RayService engine's status: the runs in flight, with each metric's
 * counts and last measurement, and a bounded history of verdicts. Plain JSON, persisted with the
 * rest of the status, so a restarted executor resumes a run without repeating or losing a measurement.
 */
import type { AnalysisPhase, MeasurementResult, MetricCounts } from './analysis-judgement';

/** One measurement as the status keeps it. */
export interface MeasurementRecord {
  /** When it was taken (epoch ms). */
  readonly at: number;
  readonly result: MeasurementResult;
  /** The new cluster's value. */
  readonly value?: number;
  /** The old cluster's value, when the condition compares them. */
  readonly activeValue?: number;
  /** The value and the bound that decided, or why there is no value. */
  readonly message: string;
}

/** One metric within a run. */
export interface MetricRunStatus extends MetricCounts {
  readonly name: string;
  readonly phase: AnalysisPhase;
  /** The latest measurement. */
  readonly last?: MeasurementRecord;
}

/** Which gate a run is. */
export type AnalysisRunKind = 'step' | 'background';

/** One run of every metric. */
export interface AnalysisRunStatus {
  /** Unique within the service: `<kind>/<pending cluster>/<weight>/<started at>`; steering names it to retry or skip. */
  readonly id: string;
  readonly kind: AnalysisRunKind;
  /** The new (pending) cluster it measures. */
  readonly cluster: string;
  /** The new cluster's weight when the run started. */
  readonly pendingWeight: number;
  /** When the weights it measures took effect (epoch ms); measurement k is due one metric interval × k later. */
  readonly startedAt: number;
  /** A hold at this weight lasts until then (epoch ms): the run measures on and passes no earlier. */
  readonly holdUntil?: number;
  readonly phase: AnalysisPhase;
  /** A person skipped this failed run: it counts as passed. */
  readonly skipped?: boolean;
  readonly metrics: readonly MetricRunStatus[];
}

/** True for a run's or verdict's phase that stops a rollout: Failed, or Inconclusive (counted as failed). */
export function isFailedPhase(phase: string | undefined): boolean {
  return phase === 'Failed' || phase === 'Inconclusive';
}

/** True for a run that failed (or was inconclusive) and that no person skipped: it holds the upgrade, and only it may be retried or skipped. */
export function isFailedRun(run: Partial<Pick<AnalysisRunStatus, 'phase' | 'skipped'>> | undefined): boolean {
  return run !== undefined && isFailedPhase(run.phase) && run.skipped !== true;
}

/** A finished run. */
export interface AnalysisVerdict {
  readonly id: string;
  readonly kind: AnalysisRunKind;
  readonly pendingWeight: number;
  /** Successful, Failed or Inconclusive; `Skipped` when a person skipped a failed run. */
  readonly phase: AnalysisPhase | 'Skipped';
  /** When it was reached (epoch ms). */
  readonly at: number;
  /** Recorded only: the analysis is a dry run. */
  readonly dryRun: boolean;
  /** The metrics that decided and why. */
  readonly message: string;
}

/** Most verdicts the status keeps (the newest). */
export const MAX_ANALYSIS_VERDICTS = 20;

/** The analysis state of a RayService. */
export interface AnalysisStatus {
  /** The step gate of the current weights. */
  readonly step?: AnalysisRunStatus;
  /** The background run of the upgrade in flight. */
  readonly background?: AnalysisRunStatus;
  /** The newest verdicts, oldest first, at most {@link MAX_ANALYSIS_VERDICTS}. */
  readonly verdicts: readonly AnalysisVerdict[];
}
