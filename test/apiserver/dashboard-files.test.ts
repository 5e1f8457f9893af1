/**
 * The API server's `/ui/`: the built dashboard's files from `dashboardDir` with the dashboard's CSP,
 * `/ui` redirected to `/ui/`, nothing outside the folder, and no `/ui/` at all without the option.
 * The server runs with `--insecure-local` against a kubeconfig whose cluster is never called.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { startApiServer, type RunningApiServer } from '../../lib/apiserver/server';
import { dashboardDirOf, registerApiServerCommand } from '../../lib/cli/api-server-command';
import { DASHBOARD_SECURITY_HEADERS, defaultDashboardDir } from '../../lib/dashboard/static-files';
import { neverCalledKubeConfig } from './support/never-called-kubeconfig';

let dir: string;
let dashboardDir: string;

/** A GET of `rawPath` sent as is (no client-side normalisation of `..`). */
function get(server: RunningApiServer, rawPath: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: server.port, path: rawPath, method: 'GET' }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rayshift-ui-'));
  dashboardDir = path.join(dir, 'dist-ui');
  fs.mkdirSync(path.join(dashboardDir, 'assets'), { recursive: true });
  fs.writeFileSync(path.join(dashboardDir, 'index.html'), '<!doctype html><title>rayshift</title>');
  fs.writeFileSync(path.join(dashboardDir, 'assets', 'app-1234.js'), 'console.log(1);');
  fs.writeFileSync(path.join(dir, 'secret.txt'), 'not for the web');
});

afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('with a dashboard folder', () => {
  let server: RunningApiServer;
  beforeAll(async () => {
    server = await startApiServer({ kubeConfig: neverCalledKubeConfig(), insecureLocal: true, port: 0, dashboardDir });
  });
  afterAll(async () => {
    await server.close();
  });

  test('/ui redirects to /ui/, which is index.html with the dashboard CSP', async () => {
    const redirect = await get(server, '/ui');
    expect({ status: redirect.status, location: redirect.headers.location }).toEqual({ status: 302, location: '/ui/' });
    const index = await get(server, '/ui/');
    expect(index.status).toBe(200);
    expect(index.text).toBe('<!doctype html><title>rayshift</title>');
    expect(index.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(index.headers['content-security-policy']).toBe(DASHBOARD_SECURITY_HEADERS['content-security-policy']);
    expect(index.headers['cache-control']).toBe('no-cache');
  });

  test('hashed assets are served with long caching', async () => {
    const asset = await get(server, '/ui/assets/app-1234.js');
    expect(asset.status).toBe(200);
    expect(asset.text).toBe('console.log(1);');
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
  });

  test('paths outside the folder and missing files are 404', async () => {
    for (const p of ['/ui/../secret.txt', '/ui/..%2fsecret.txt', '/ui/%2e%2e/secret.txt', '/ui/nothing.js', '/ui/assets']) {
      const answer = await get(server, p);
      expect({ path: p, status: answer.status }).toEqual({ path: p, status: 404 });
      expect(answer.text).not.toContain('not for the web');
    }
  });
});

test('without a dashboard folder, /ui/ is not served', async () => {
  const server = await startApiServer({ kubeConfig: neverCalledKubeConfig(), insecureLocal: true, port: 0 });
  try {
    expect((await get(server, '/ui/')).status).toBe(404);
  } finally {
    await server.close();
  }
});

test('--dashboard-dir must hold index.html; unset, the package dist-ui/ is used when built', () => {
  expect(dashboardDirOf(dashboardDir)).toBe(dashboardDir);
  expect(() => dashboardDirOf(dir)).toThrow(/holds no index\.html/);
  expect(dashboardDirOf(undefined)).toBe(fs.existsSync(path.join(defaultDashboardDir(), 'index.html')) ? defaultDashboardDir() : undefined);
});

test('--no-dashboard serves none, even with the package dist-ui/ built, and refuses a --dashboard-dir beside it', () => {
  expect(dashboardDirOf(undefined, false)).toBeUndefined();
  expect(() => dashboardDirOf(dashboardDir, false)).toThrow(`--no-dashboard and --dashboard-dir ${dashboardDir} contradict each other: give one`);
});

test('`api-server --no-dashboard --dashboard-dir …` exits 2 naming both flags, before any other work', async () => {
  const { Command } = await import('commander');
  const program = new Command().exitOverride();
  let code: number | undefined;
  registerApiServerCommand(program, (c) => { code = c; });
  // --insecure-local needs no certificate; the flags are refused before the kubeconfig is read.
  await program.parseAsync(['api-server', '--insecure-local', '--no-dashboard', '--dashboard-dir', dashboardDir, '--log-level', 'silent'], { from: 'user' });
  expect(code).toBe(2);
});
