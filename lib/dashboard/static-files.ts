/**
 * The built dashboard's files (`dist-ui/`, from `npm run build:ui`) as both `rayshift dashboard` and
 * the API server (`rayshift api-server --dashboard-dir`) serve them under `/ui/`: a strict CSP and
 * other security headers on every answer, long caching of Vite's content-hashed assets, and nothing
 * outside the folder.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { projectRoot } from '../runtime/package-root';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
};

/** Headers of every static answer: a strict CSP (the token lives in sessionStorage), no sniffing, no referrer. */
export const DASHBOARD_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

/** Where `npm run build:ui` puts the dashboard: `<package root>/dist-ui`. */
export function defaultDashboardDir(): string {
  return path.join(projectRoot(), 'dist-ui');
}

/** A response to write a file to (an HTTP/1.1 or HTTP/2 compatibility response). */
export type FileResponse = NodeJS.WritableStream & { writeHead(status: number, headers: Record<string, string>): unknown };

/**
 * Serves a file of the built dashboard for a path under `/ui/` (`index.html` for `/ui/` itself)
 * with the dashboard's security and caching headers. Resolves nothing outside `root`. Returns false,
 * writing nothing, when there is no such file (the caller answers 404).
 */
export function serveDashboardFile(root: string, urlPath: string, res: FileResponse): boolean {
  let rel: string;
  try {
    rel = decodeURIComponent(urlPath.replace(/^\/ui\/?/, ''));
  } catch {
    return false;
  }
  const base = path.resolve(root);
  const file = path.resolve(base, rel === '' ? 'index.html' : rel);
  if (!file.startsWith(base + path.sep)) return false;
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch {
    return false;
  }
  if (!stat.isFile()) return false;
  const hashed = file.includes(`${path.sep}assets${path.sep}`);
  res.writeHead(200, {
    ...DASHBOARD_SECURITY_HEADERS,
    'content-type': CONTENT_TYPES[path.extname(file)] ?? 'application/octet-stream',
    'content-length': String(stat.size),
    // Vite names assets by content hash: cache them for good; always revalidate the page itself.
    'cache-control': hashed ? 'public, max-age=31536000, immutable' : 'no-cache',
  });
  fs.createReadStream(file).pipe(res);
  return true;
}
