/**
 * What `npm ci` installs from a package-lock.json (lockfileVersion 3) on another machine: walks the
 * lockfile's edges from the root and its workspaces as npm's arborist does, with npm's platform rule
 * (npm-install-checks' `checkPlatform`: `os`, `cpu`, `libc`, `!` negations). A required package whose
 * platform does not fit is npm's EBADPLATFORM; an optional one is skipped with its subtree.
 *
 * npm's own `--os`/`--cpu` overrides cannot stand in for this: with them `npm ci` installs a required
 * package of another platform without EBADPLATFORM (npm 11.19), so only the lockfile can tell.
 */

/** A machine as npm sees it. */
export interface Platform {
  readonly os: string;
  readonly cpu: string;
  /** `glibc` or `musl` on Linux; undefined elsewhere. */
  readonly libc?: string;
}

/** One `packages` entry of the lockfile (the fields the walk reads). */
export interface LockEntry {
  readonly version?: string;
  readonly link?: boolean;
  readonly resolved?: string;
  readonly os?: string | string[];
  readonly cpu?: string | string[];
  readonly libc?: string | string[];
  readonly workspaces?: string[];
  readonly dependencies?: Record<string, string>;
  readonly optionalDependencies?: Record<string, string>;
  readonly devDependencies?: Record<string, string>;
  readonly peerDependencies?: Record<string, string>;
  readonly peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

/** A lockfile (the part the walk reads). */
export interface Lockfile {
  readonly packages: Record<string, LockEntry>;
}

/** What `npm ci` would do on a platform. */
export interface InstallPlan {
  /** Lockfile locations installed (`node_modules/...`), links followed. */
  readonly installed: ReadonlySet<string>;
  /** Lockfile locations skipped as optional packages of another platform. */
  readonly skipped: ReadonlySet<string>;
  /** EBADPLATFORM and missing required packages: `npm ci` fails on any. */
  readonly errors: readonly string[];
}

function fits(value: string | undefined, list: string | string[] | undefined): boolean {
  if (list === undefined) return true;
  const entries = typeof list === 'string' ? [list] : list;
  if (entries.length === 1 && entries[0] === 'any') return true;
  if (value === undefined) return false;
  let negated = 0;
  let match = false;
  for (const e of entries) {
    if (e.startsWith('!')) {
      negated++;
      if (value === e.slice(1)) return false;
    } else if (value === e) match = true;
  }
  return match || negated === entries.length;
}

/** Whether npm installs a package with these `os`/`cpu`/`libc` fields on `p`. */
export function platformFits(entry: Pick<LockEntry, 'os' | 'cpu' | 'libc'>, p: Platform): boolean {
  return fits(p.os, entry.os) && fits(p.cpu, entry.cpu) && (entry.libc === undefined || fits(p.libc, entry.libc));
}

/** Node's module resolution over lockfile locations: `from`'s own node_modules, then each parent's. */
function resolve(lock: Lockfile, from: string, name: string): string | undefined {
  let base = from;
  for (;;) {
    const candidate = base === '' ? `node_modules/${name}` : `${base}/node_modules/${name}`;
    if (lock.packages[candidate]) return candidate;
    if (base === '') return undefined;
    const cut = base.lastIndexOf('/node_modules/');
    base = cut >= 0 ? base.slice(0, cut) : '';
  }
}

/** Walks `lock` as `npm ci` (dev dependencies included) would on `platform`. */
export function planInstall(lock: Lockfile, platform: Platform): InstallPlan {
  const installed = new Set<string>();
  const skipped = new Set<string>();
  const errors: string[] = [];
  const root = lock.packages[''];
  // [location, reached only through an optional edge somewhere above, path for messages]
  const queue: [string, boolean, string][] = [['', false, '(root)']];
  for (const ws of root.workspaces ?? []) queue.push([ws, false, ws]);
  while (queue.length > 0) {
    const [loc, underOptional, via] = queue.shift()!;
    if (installed.has(loc)) continue;
    installed.add(loc);
    const entry = lock.packages[loc];
    const top = loc === '' || (root.workspaces ?? []).includes(loc);
    const edges: [string, boolean][] = [
      ...Object.keys(entry.dependencies ?? {}).map((n): [string, boolean] => [n, false]),
      ...Object.keys(entry.optionalDependencies ?? {}).map((n): [string, boolean] => [n, true]),
      ...(top ? Object.keys(entry.devDependencies ?? {}).map((n): [string, boolean] => [n, false]) : []),
      ...Object.keys(entry.peerDependencies ?? {}).map((n): [string, boolean] => [n, entry.peerDependenciesMeta?.[n]?.optional === true]),
    ];
    for (const [name, optional] of edges) {
      let target = resolve(lock, loc, name);
      const path = `${via} > ${name}`;
      if (target === undefined) {
        if (!optional && !underOptional) errors.push(`${path}: not in the lockfile`);
        continue;
      }
      const t = lock.packages[target];
      if (t.link && t.resolved !== undefined) target = t.resolved;
      const targetEntry = lock.packages[target];
      if (!platformFits(targetEntry, platform)) {
        if (optional || underOptional) skipped.add(target);
        else errors.push(`${path}: EBADPLATFORM (${target} wants os ${JSON.stringify(targetEntry.os)}, cpu ${JSON.stringify(targetEntry.cpu)})`);
        continue;
      }
      queue.push([target, underOptional || optional, path]);
    }
  }
  return { installed, skipped, errors };
}
