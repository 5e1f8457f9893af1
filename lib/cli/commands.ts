import { plan } from '../engine/plan';
import { rayServiceEngineOptions, rbgPlanInputs } from '../engine/from-spec';
import { RayServiceSpec } from '../spec/rayservice';
import { asObject } from '../spec/read';
import { InputDocument, LocatedProblem, groupOfPolicy, identity, isForeign, readDocuments, validateDocuments } from './documents';
import { renderRayServicePlan, renderRoleBasedGroupPlan } from './render-plan';
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

function loadAndValidate(files: readonly string[]): { documents: InputDocument[]; problems: LocatedProblem[] } {
  const { documents, problems } = readDocuments(files);
  return { documents, problems: [...problems, ...validateDocuments(documents)] };
}

function summary(problems: readonly LocatedProblem[], documents: readonly InputDocument[]): string {
  const errors = problems.filter((p) => p.severity === 'error').length;
  const warnings = problems.length - errors;
  const checked = documents.filter((d) => !isForeign(d)).length;
  const skipped = documents.length - checked;
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  return `${plural(errors, 'error')}, ${plural(warnings, 'warning')} in ${plural(checked, 'document')}${skipped > 0 ? ` (${skipped} of other API groups skipped)` : ''}`;
}

/** `rayshift validate FILE...`: every problem of every document; exit 1 when any is an error. */
export function validateCommand(files: readonly string[], json: boolean, io: Output): number {
  const { documents, problems } = loadAndValidate(files);
  const failed = problems.some((p) => p.severity === 'error');
  if (json) {
    io.out(`${JSON.stringify({ problems: problems.map(({ file, document, kind, name, path, message, severity }) => ({ file, document, kind, name, path, message, severity })) }, null, 2)}\n`);
  } else {
    for (const p of problems) io.out(`${formatProblem(p, io.outStyle)}\n`);
    io.err(`${failed ? io.errStyle.red('invalid') : 'valid'}: ${summary(problems, documents)}\n`);
  }
  return failed ? EXIT.invalid : EXIT.ok;
}

/**
 * `rayshift plan FILE...`: the upgrade timeline of each RayService with an upgrade strategy and
 * the rounds of each RoleBasedGroup rolling-update rule. Invalid input prints the same messages
 * as `validate`, exits 1 and plans nothing.
 */
export function planCommand(files: readonly string[], json: boolean, io: Output): number {
  const { documents, problems } = loadAndValidate(files);
  if (problems.some((p) => p.severity === 'error')) {
    for (const p of problems) io.err(`${formatProblem(p, io.errStyle)}\n`);
    io.err(`${io.errStyle.red('invalid')}: ${summary(problems, documents)}; no plan\n`);
    return EXIT.invalid;
  }
  const plans: unknown[] = [];
  const texts: string[] = [];
  for (const doc of documents) {
    const { kind } = identity(doc);
    const spec = asObject(doc.manifest.spec);
    if (kind === 'RayService' && spec.upgradeStrategy !== undefined) {
      const p = plan({ kind: 'RayService', name: identity(doc).name, options: rayServiceEngineOptions(spec as unknown as RayServiceSpec) });
      plans.push(p);
      texts.push(renderRayServicePlan(p, io.outStyle));
    } else if (kind === 'RoleBasedGroup') {
      const policy = documents.find((d) => identity(d).kind === 'CoordinatedPolicy' && groupOfPolicy(d, documents) === doc);
      for (const input of rbgPlanInputs(doc.manifest, policy?.manifest)) {
        const p = { ...plan(input), rule: input.rule };
        plans.push(p);
        texts.push(renderRoleBasedGroupPlan(p, io.outStyle));
      }
    }
  }
  if (json) io.out(`${JSON.stringify({ plans }, null, 2)}\n`);
  else io.out(`${texts.length > 0 ? texts.join('\n\n') : 'nothing to plan: no RayService with an upgrade strategy and no RoleBasedGroup rolling-update rule'}\n`);
  return EXIT.ok;
}
