import * as fs from 'node:fs';
import * as https from 'node:https';
import * as path from 'node:path';
import { PinnedCrd, upstreamUrl } from './catalog';
import { projectRoot } from '../runtime/package-root';

// Scripts and tests read the root from here too; the package's own code imports package-root.
export { projectRoot };

/** Where `../shared/crds` would be for this checkout; override with `RAYSHIFT_SHARED_CRDS`. */
export function sharedCrdDir(): string {
  return process.env.RAYSHIFT_SHARED_CRDS ?? path.join(projectRoot(), '..', 'shared', 'crds');
}

/** Where downloaded CRDs are cached (outside the source tree proper, ignored by git). */
export function crdCacheDir(): string {
  return process.env.RAYSHIFT_CRD_CACHE ?? path.join(projectRoot(), '.cache', 'crds');
}

/**
 * Returns a local path holding the pinned CRD file: the shared copy when present, else the cached
 * download, else a fresh download from the pinned upstream URL (written atomically to the cache).
 */
export async function resolveCrdFile(crd: PinnedCrd): Promise<string> {
  const shared = path.join(sharedCrdDir(), crd.project, crd.version, crd.file);
  if (fs.existsSync(shared)) return shared;
  const cached = path.join(crdCacheDir(), crd.project, crd.version, crd.file);
  if (fs.existsSync(cached)) return cached;
  // Say what was looked for where: a bare `getaddrinfo ENOTFOUND` does not tell which file was missing.
  const body = await download(upstreamUrl(crd)).catch((e: Error) => {
    throw new Error(`${crd.project} ${crd.version} ${crd.file} is neither in ${path.dirname(shared)} nor in ${path.dirname(cached)}, and fetching it failed (RAYSHIFT_SHARED_CRDS may name a copy of ../shared/crds): ${e.message}`);
  });
  fs.mkdirSync(path.dirname(cached), { recursive: true });
  const tmp = `${cached}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, body);
  fs.renameSync(tmp, cached);
  return cached;
}

function download(url: string, redirects = 3): Promise<string> {
  return new Promise((resolve, reject) => {
    https
      .get(url, { timeout: 30_000 }, (res) => {
        const status = res.statusCode ?? 0;
        if (status >= 300 && status < 400 && res.headers.location && redirects > 0) {
          res.resume();
          resolve(download(new URL(res.headers.location, url).toString(), redirects - 1));
          return;
        }
        if (status !== 200) {
          res.resume();
          reject(new Error(`downloading ${url}: HTTP ${status}`));
          return;
        }
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
        res.on('error', reject);
      })
      .on('timeout', function (this: { destroy(e: Error): void }) {
        this.destroy(new Error('timed out after 30 s'));
      })
      .on('error', (e: Error) => reject(new Error(`downloading ${url}: ${e.message}`)));
  });
}
