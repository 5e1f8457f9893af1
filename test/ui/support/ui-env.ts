/**
 * Setup of the dashboard's browser tests: the API server's test environment (real kube-apiserver
 * with token users alice and bob on the test cluster with the real KubeRay, the in-process operator
 * and the TEST-ONLY Gateway status writer and Serve fleet, the rayshift API server on TLS, also serving the dashboard under `/ui/`),
 * the dashboard server proxying to it,
 * and Debian's Chromium driven by playwright-core. Also: restarting the API server on its port,
 * screenshots with a not-blank check, and an axe-core scan.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { startApiServer, type RunningApiServer } from '../../../lib/apiserver/server';
import { startDashboard, type RunningDashboard } from '../../../lib/cli/dashboard-command';
import { projectRoot } from '../../../lib/crds/resolve';
import { loadClientNode } from '../../../lib/runtime/kube/client-node';
import { ApiEnv, TEAM_A, startApiEnv } from '../../apiserver/support/api-env';

/** Where screenshots go (gitignored). */
export const ARTIFACTS = path.join(projectRoot(), 'test-artifacts', 'ui');
/** The Chromium binary of Debian's `chromium` package. */
export const CHROMIUM = process.env.RAYSHIFT_CHROMIUM ?? '/usr/bin/chromium';

/** Everything a dashboard test needs. */
export interface UiEnv {
  readonly api: ApiEnv;
  readonly dashboard: RunningDashboard;
  readonly browser: Browser;
  /** The running API server (changes on `restartApiServer`). */
  apiServer(): RunningApiServer;
  /** Stops the API server, runs `whileDown`, and starts it again on the same port. */
  restartApiServer(whileDown?: () => Promise<void>): Promise<void>;
  /** A browser page signed in with `token` through the dashboard's token form. */
  signedInPage(token: string): Promise<{ context: BrowserContext; page: Page }>;
  stop(): Promise<void>;
}

/** Starts the environment: API server with the operator (watch heartbeats every second), dashboard, browser. */
export async function startUiEnv(): Promise<UiEnv> {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found: install Debian's chromium (apt-get install -y chromium) or set RAYSHIFT_CHROMIUM`);
  const staticDir = path.join(projectRoot(), 'dist-ui');
  if (!fs.existsSync(path.join(staticDir, 'index.html'))) throw new Error('dist-ui/ is missing: run `npm run build:ui` first');
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const api = await startApiEnv({ operator: true, heartbeatSeconds: 1, dashboardDir: staticDir });
  let current: RunningApiServer = api.api;
  const dashboard = await startDashboard({ apiServer: api.api.url, ca: api.cp.ca, listen: '127.0.0.1:0', staticDir });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-default-apps', '--no-first-run', '--disable-dev-shm-usage'],
  });
  const contexts: BrowserContext[] = [];
  return {
    api,
    dashboard,
    browser,
    apiServer: () => current,
    async restartApiServer(whileDown) {
      const port = current.port;
      await current.close();
      await whileDown?.();
      const kc = new (loadClientNode().KubeConfig)();
      kc.loadFromFile(api.cp.kubeconfigPath);
      const pki = path.join(api.cp.dir, 'pki');
      current = await startApiServer({
        kubeConfig: kc,
        host: '127.0.0.1',
        port,
        tls: { cert: fs.readFileSync(path.join(pki, 'apiserver.crt')), key: fs.readFileSync(path.join(pki, 'apiserver.key')) },
        heartbeatSeconds: 1,
        dashboardDir: staticDir,
      });
    },
    async signedInPage(token) {
      const context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
      contexts.push(context);
      const page = await context.newPage();
      page.setDefaultTimeout(60_000);
      await page.goto(dashboard.url);
      await page.getByLabel('API token').fill(token);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByTestId('username').waitFor();
      return { context, page };
    },
    async stop() {
      for (const c of contexts) await c.close().catch(() => undefined);
      await browser.close();
      await dashboard.close();
      if (current !== api.api) await current.close();
      await api.stop();
    },
  };
}

/** Role for a viewer: read RayServices (and RoleBasedGroups) in `namespace`, no steering subresources. */
export async function grantViewer(api: ApiEnv, user: string, namespace = TEAM_A): Promise<void> {
  await api.admin.create({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: 'rollout-viewer', namespace },
    rules: [
      { apiGroups: ['rayshift.dev'], resources: ['rayservices'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['workloads.x-k8s.io'], resources: ['rolebasedgroups', 'coordinatedpolicies'], verbs: ['get', 'list'] },
    ],
  } as never);
  await api.admin.create({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: `${user}-views`, namespace },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'rollout-viewer' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
  } as never);
}

/** What `pixelStats` measures of a screenshot. */
export interface PixelStats {
  readonly width: number;
  readonly height: number;
  /** Distinct colours among sampled pixels. */
  readonly colours: number;
  /** Share of sampled pixels that are not (near) white. */
  readonly inked: number;
}

/**
 * Decodes a PNG in the browser (a blank page, so the dashboard's CSP does not apply) and samples
 * its pixels: how many colours and how much of it is not background.
 */
export async function pixelStats(browser: Browser, png: Buffer): Promise<PixelStats> {
  const page = await browser.newPage();
  try {
    const fn = `async (b64) => {
      const img = new Image();
      img.src = 'data:image/png;base64,' + b64;
      await img.decode();
      const c = document.createElement('canvas');
      c.width = img.width; c.height = img.height;
      const g = c.getContext('2d');
      g.drawImage(img, 0, 0);
      const d = g.getImageData(0, 0, c.width, c.height).data;
      const colours = new Set();
      let inked = 0, n = 0;
      for (let i = 0; i < d.length; i += 4 * 7) {
        n++;
        colours.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
        if (d[i] < 235 || d[i + 1] < 235 || d[i + 2] < 235) inked++;
      }
      return { width: c.width, height: c.height, colours: colours.size, inked: inked / n };
    }`;
    return (await page.evaluate(`(${fn})(${JSON.stringify(png.toString('base64'))})`)) as PixelStats;
  } finally {
    await page.close();
  }
}

/** Writes a full-page screenshot to the artifacts folder; returns it and its pixel statistics. */
export async function screenshot(browser: Browser, page: Page, name: string): Promise<{ file: string; bytes: number; stats: PixelStats }> {
  const file = path.join(ARTIFACTS, `${name}.png`);
  const png = await page.screenshot({ path: file, fullPage: true });
  return { file, bytes: png.length, stats: await pixelStats(browser, png) };
}

/** One axe-core violation, as the scan reports it. */
export interface AxeViolation {
  readonly id: string;
  readonly impact: string | null;
  readonly help: string;
  readonly nodes: number;
}

/** Runs axe-core (WCAG 2 A/AA rules and best practices) on the page; returns every violation. */
export async function axeScan(page: Page): Promise<AxeViolation[]> {
  const source = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
  // Evaluated through the DevTools protocol, which the page's CSP does not restrict.
  await page.evaluate(source);
  const result = (await page.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length })))`)) as AxeViolation[];
  return result;
}
