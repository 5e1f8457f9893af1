/**
 * The `analysis` option of a RoleBasedGroup's coordinated rollout: the same `UpgradeAnalysis` a
 * RayService upgrade takes (`lib/spec/analysis.ts`), checked by the same validator, plus what a
 * RoleBasedGroup cannot run. Before each round after the first (and before the rollout completes)
 * rayshift's executor measures every metric at the new revision's share of the replicas.
 *
 * A query's placeholders for a RoleBasedGroup: `{{namespace}}` (the group's), `{{service}}` (the
 * group's name), `{{cluster}}` (the new revision: its coordinated roles' workload update revisions,
 * `status.updateRevision`, joined by `|` for a `=~` match) and `{{window}}`. Pods of a StatefulSet
 * carry that name as `controller-revision-hash`; RBG's default RoleInstanceSet does not pass it on
 * to its pods (they carry their RoleInstance's own short revision hash), so queries of such roles
 * select the release by a label of the role template instead. The built-in templates measure a RayCluster's Ray Serve or route backend series,
 * and the `…Active` bounds an old RayCluster measured apart: a RoleBasedGroup has neither.
 */
import { ProblemList, show } from './problem';
import { validateUpgradeAnalysis } from './analysis';
import { asArray, asObject, isObject } from './read';
import type { RbgExecutor } from './rbg';

/** The executor a rollout analysis is checked for. */
export interface RolloutAnalysisContext {
  /** Who moves the partitions: only rayshift's executors can wait for a measurement. */
  readonly executor: RbgExecutor;
}

/** Checks a RoleBasedGroup rollout's `analysis` at `at`, adding every problem to `problems`. */
export function checkRolloutAnalysis(problems: ProblemList, at: string, value: unknown, ctx: RolloutAnalysisContext): void {
  problems.addAll(validateUpgradeAnalysis(value, at, { versionInQuery: true }));
  if (!isObject(value)) return;
  if (ctx.executor === 'rbg') {
    problems.error(at, 'is run only by the rayshift executors (operator, pulumi): with executor "rbg" the RBG controller moves the partitions and cannot wait for a measurement; use executor "operator" or "pulumi", or drop analysis');
  }
  asArray(value.metrics).forEach((m, i) => {
    const metric = asObject(m);
    if (metric.template !== undefined) {
      problems.error(`${at}.metrics[${i}].template`, `${show(metric.template)} measures a RayCluster (its Ray Serve or route backend series), which a RoleBasedGroup does not have; use query, selecting the new release by a label of the role template (e.g. app_kubernetes_io_version="v2"), or by {{cluster}} where the pods carry their workload's revision`);
    }
    const condition = asObject(metric.successCondition);
    for (const bound of ['maxAboveActive', 'maxAboveActivePercent'] as const) {
      if (condition[bound] !== undefined) {
        problems.error(`${at}.metrics[${i}].successCondition.${bound}`, 'compares with an old RayCluster measured apart, which a RoleBasedGroup rollout does not have; use maximum or minimum');
      }
    }
  });
}
