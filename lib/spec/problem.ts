/** How serious a validation finding is: errors block synthesis and admission, warnings are printed. */
export type Severity = 'error' | 'warning';

/** One validation finding, located by a dotted path such as `spec.upgradeStrategy.clusterUpgradeOptions.stepSizePercent`. */
export interface Problem {
  /** Dotted path of the offending field, with list indexes in brackets (`spec.roles[1].replicas`). */
  readonly path: string;
  /** What is wrong, naming the value and the allowed range. */
  readonly message: string;
  /** Whether the finding blocks (`error`) or only informs (`warning`). */
  readonly severity: Severity;
}

/** Every finding of one validation run, errors and warnings apart. */
export interface ValidationResult {
  /** Findings that make the object invalid. */
  readonly errors: Problem[];
  /** Findings that are allowed but probably not what the user meant. */
  readonly warnings: Problem[];
}

/** Collects findings while a validator walks an object. */
export class ProblemList {
  private readonly errors: Problem[] = [];
  private readonly warnings: Problem[] = [];

  /** Records an error at `path`. */
  error(path: string, message: string): void {
    this.errors.push({ path, message, severity: 'error' });
  }

  /** Records a warning at `path`. */
  warning(path: string, message: string): void {
    this.warnings.push({ path, message, severity: 'warning' });
  }

  /** True when no error has been recorded so far. */
  get ok(): boolean {
    return this.errors.length === 0;
  }

  /** Adds every finding of another result, with their paths prefixed by `prefix` when given. */
  addAll(result: ValidationResult, prefix = ''): void {
    const at = (p: string) => (prefix ? (p ? `${prefix}.${p}` : prefix) : p);
    for (const e of result.errors) this.error(at(e.path), e.message);
    for (const w of result.warnings) this.warning(at(w.path), w.message);
  }

  /** The findings recorded so far. */
  result(): ValidationResult {
    return { errors: [...this.errors], warnings: [...this.warnings] };
  }
}

/**
 * Records an error at `path` when `value` is set but not one of `allowed`, naming the value and
 * every allowed one (`"Operator" is not an executor; allowed: kuberay, operator`); `what` names one
 * allowed value's kind, with its article. The check of every string union of the model, for the
 * callers TypeScript's types do not hold (JavaScript, the jsii languages, YAML).
 */
export function checkOneOf(problems: ProblemList, path: string, value: unknown, allowed: readonly string[], what: string): void {
  if (value !== undefined && !allowed.includes(value as string)) problems.error(path, `${show(value)} is not ${what}; allowed: ${allowed.join(', ')}`);
}

/** Renders one finding as `PATH: MESSAGE`. */
export function formatProblem(p: Problem): string {
  return `${p.path}: ${p.message}`;
}

/** Renders a value for an error message: strings quoted, objects as compact JSON, `undefined` as `unset`. */
export function show(value: unknown): string {
  if (value === undefined) return 'unset';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  try {
    const json = JSON.stringify(value);
    return json.length > 80 ? `${json.slice(0, 77)}...` : json;
  } catch {
    try {
      return String(value);
    } catch {
      return Object.prototype.toString.call(value);
    }
  }
}
