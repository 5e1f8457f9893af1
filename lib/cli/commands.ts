import * as fs from 'node:fs';
import { CheckOptions, CheckedInput, InputDocument, LocatedProblem, checkFiles, isForeign } from './documents';
import { planDocuments, type CliPlan, type SkippedObject } from './plan-documents';
import { renderRayServicePlan, renderRoleBasedGroupPlan, renderSkipped } from './render-plan';
import { renderWarmupStage } from './render-warmup';
import { Style } from './style';

/** Where a command writes, and how it styles each stream. */
export interface Output {
  /** Writes to standard output. */
  out(text: string): void;
  /** Writes to standard error. */
  err(text: string): void;
  /** Style of standard output. */
  outStyle: Style;
  /** Style of standard error. */
  errStyle: Style;
  /** Standard output is a terminal: live views redraw in place instead of printing a line per change. */
  interactive?: boolean;
  /** Reads all of standard input, the file `-` of `validate` and `plan`. @default reads file descriptor 0 */
  stdin?(): string;
}

/** Exit codes of the CLI. */
export const EXIT = { ok: 0, invalid: 1, usage: 2 } as const;

function formatProblem(p: LocatedProblem, style: Style): string {
  const where = p.document > 0 ? `${p.file}:${p.document}` : p.file;
  const what = p.kind || p.name ? ` ${p.kind}/${p.name}` : '';
  const path = p.path ? ` ${p.path}:` : '';
  const message = p.severity === 'warning' ? `${style.yellow('warning:')} ${p.message}` : p.message;
  return `${where}${what}:${path} ${message}`;
}

/**
 * The checked input of validate and plan, one line per problem: a file named twice is read once, and
 * a problem two checks find alike (same file, document, object, path, message and severity) is kept once.
 */
function check(files: readonly string[], io: Output, options: CheckOptions): CheckedInput {
  const { documents, problems } = checkFiles([...new Set(files)], io.stdin ?? (() => fs.readFileSync(0, 'utf8')), options);
  const seen = new Set<string>();
  const unique = problems.filter((p) => {
    const key = JSON.stringify([p.file, p.document, p.kind, p.name, p.path, p.message, p.severity]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return { documents, problems: unique };
}

/** The problems as `--json` prints them. */
function problemsJson(problems: readonly LocatedProblem[]): unknown[] {
  return problems.map(({ file, document, kind, name, path, message, severity }) => ({ file, document, kind, name, path, message, severity }));
}

function summary(problems: readonly LocatedProblem[], documents: readonly InputDocument[]): string {
  const errors = problems.filter((p) => p.severity === 'error').length;
  const warnings = problems.length - errors;
  const checked = documents.filter((d) => !isForeign(d)).length;
  const skipped = documents.length - checked;
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  return `${plural(errors, 'error')}, ${plural(warnings, 'warning')} in ${plural(checked, 'document')}${skipped > 0 ? ` (${skipped} of other kinds skipped)` : ''}`;
}

/** `rayshift validate FILE...`: every problem of every document, then the summary line, on stdout; exit 1 when any is an error. */
export function validateCommand(files: readonly string[], json: boolean, io: Output, options: CheckOptions = {}): number {
  const { documents, problems } = check(files, io, options);
  const failed = problems.some((p) => p.severity === 'error');
  if (json) {
    io.out(`${JSON.stringify({ problems: problemsJson(problems) }, null, 2)}\n`);
  } else {
    for (const p of problems) io.out(`${formatProblem(p, io.outStyle)}\n`);
    // The summary is validate's result, so it goes with the problems to stdout (`validate … > report.txt` keeps both).
    io.out(`${failed ? io.outStyle.red('invalid') : 'valid'}: ${summary(problems, documents)}\n`);
  }
  return failed ? EXIT.invalid : EXIT.ok;
}

/**
 * `rayshift plan FILE...`: the upgrade timeline of each RayService (with the strategy it gets when
 * none is set) and the rounds of each RoleBasedGroup rolling-update rule, with the Pods and
 * accelerators at each step and the peak, and what was not planned with the reason. Problems of
 * the input (warnings included) are printed as `validate` words them, on stderr, or with `json` in
 * `"problems"` next to `"plans"` and `"skipped"`; an error exits 1 and plans nothing. With
 * `failAtRound` (`--fail-at-round`), each rule a rayshift executor runs also shows its rollback rounds.
 */
export function planCommand(files: readonly string[], json: boolean, io: Output, options: CheckOptions = {}, failAtRound?: number): number {
  return printPlans(planFiles(files, io, options, failAtRound), json, io);
}

/** What `plan` computed from its files: the checked documents, their problems, and the plans (none when an error was found). */
export interface PlannedFiles {
  readonly documents: readonly InputDocument[];
  readonly problems: readonly LocatedProblem[];
  readonly failed: boolean;
  readonly plans: CliPlan[];
  readonly skipped: SkippedObject[];
}

/** Checks and plans `files` (the first half of `plan`; `plan --cluster` adds the live cluster's capacity before printing). */
export function planFiles(files: readonly string[], io: Output, options: CheckOptions = {}, failAtRound?: number): PlannedFiles {
  const { documents, problems } = check(files, io, options);
  const failed = problems.some((p) => p.severity === 'error');
  const { plans, skipped } = failed ? { plans: [], skipped: [] } : planDocuments(documents, failAtRound);
  return { documents, problems, failed, plans, skipped };
}

/** Prints what `planFiles` computed, as tables and charts or as JSON; returns the exit code. */
export function printPlans(planned: PlannedFiles, json: boolean, io: Output): number {
  const { documents, problems, failed, plans, skipped } = planned;
  if (json) {
    io.out(`${JSON.stringify({ plans, skipped, problems: problemsJson(problems) }, null, 2)}\n`);
    return failed ? EXIT.invalid : EXIT.ok;
  }
  for (const p of problems) io.err(`${formatProblem(p, io.errStyle)}\n`);
  if (failed) {
    io.err(`${io.errStyle.red('invalid')}: ${summary(problems, documents)}; no plan\n`);
    return EXIT.invalid;
  }
  const texts = plans.map((p) =>
    p.kind === 'RayService' ? renderRayServicePlan(p, io.outStyle) : [...(p.warmup ? renderWarmupStage(p.name, p.warmup, io.outStyle) : []), renderRoleBasedGroupPlan(p, io.outStyle)].join('\n'),
  );
  if (skipped.length > 0) texts.push(renderSkipped(skipped, io.outStyle));
  io.out(`${texts.length > 0 ? texts.join('\n\n') : 'nothing to plan: no RayService, RoleBasedGroup or CoordinatedPolicy in the files'}\n`);
  return EXIT.ok;
}
