/** The compiled CLI (`npm run build`) that tests run as a user would, checked to be as new as its sources. */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The repository root. */
export const root = path.resolve(__dirname, '../..');

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sources(p) : p.endsWith('.ts') && !p.endsWith('.d.ts') ? [p] : [];
  });
}

/** Throws unless `build/` holds a compiled file at least as new as each source under `lib/` (a stale build would test old code). */
export function requireFreshBuild(): void {
  const stale = sources(path.join(root, 'lib')).filter((ts) => {
    const js = path.join(root, 'build', path.relative(root, ts)).replace(/\.ts$/, '.js');
    return !fs.existsSync(js) || fs.statSync(js).mtimeMs < fs.statSync(ts).mtimeMs;
  });
  if (stale.length > 0) throw new Error(`build/ is missing or older than ${path.relative(root, stale[0])}${stale.length > 1 ? ` and ${stale.length - 1} more` : ''}: run \`npm run build\` first (npm test does)`);
}
