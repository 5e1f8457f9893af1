/**
 * Benchmark of the dashboard's page weight and speed: the gzipped size of the built JavaScript
 * (goal < 250 KB) and the time from navigation to the first chart with data on the rollout page
 * (goal < 1 s), measured in Debian's Chromium against the real API server and operator (the API
 * server's test environment). Prints the figures; never asserts.
 *
 *   npm run build:ui && npx tsx bench/ui.bench.ts
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { chromium } from 'playwright-core';
import { startDashboard } from '../lib/cli/dashboard-command';
import { projectRoot } from '../lib/crds/resolve';
import { TEAM_A, rayServiceBody, startApiEnv } from '../test/apiserver/support/api-env';
import { waitFor } from '../test/support/operator-env';

const JS_GOAL_BYTES = 250 * 1024;
const FIRST_CHART_GOAL_MS = 1_000;
const NAVIGATIONS = 15;
const CHROMIUM = process.env.RAYSHIFT_CHROMIUM ?? '/usr/bin/chromium';

function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

function kb(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KB`;
}

function bundleSize(dist: string): void {
  const files = filesUnder(dist).filter((f) => /\.(js|css|html)$/.test(f));
  let js = 0;
  console.log('file                                   raw        gzip');
  for (const f of files) {
    const raw = fs.readFileSync(f);
    const gz = zlib.gzipSync(raw, { level: 9 }).length;
    if (f.endsWith('.js')) js += gz;
    console.log(`${path.relative(dist, f).padEnd(36)} ${kb(raw.length).padStart(9)} ${kb(gz).padStart(10)}`);
  }
  console.log(`gzipped JavaScript: ${kb(js)} (goal < ${kb(JS_GOAL_BYTES)}) ${js < JS_GOAL_BYTES ? 'OK' : 'OVER'}`);
}

/** Milliseconds from navigation start to the first chart with a data point, as the page's own clock says. */
const FIRST_CHART_PROBE = `
  new MutationObserver((_, observer) => {
    const svg = document.querySelector('[data-testid=rollout-chart]');
    if (svg && Number(svg.getAttribute('data-samples')) > 0) {
      window.__firstChartMs = performance.now();
      observer.disconnect();
    }
  }).observe(document, { subtree: true, childList: true, attributes: true });
`;

async function firstChart(): Promise<void> {
  const env = await startApiEnv({ operator: true });
  const dashboard = await startDashboard({ apiServer: env.api.url, ca: env.cp.ca, listen: '127.0.0.1:0' });
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-dev-shm-usage'] });
  try {
    await env.rest('POST', `/apis/rayshift/v1/namespaces/${TEAM_A}/rayservices`, rayServiceBody('llm'));
    await waitFor(async () => (await env.rest('GET', `/apis/rayshift/v1/namespaces/${TEAM_A}/rayservices/llm/upgrade`)).body.phase === 'UPGRADE_PHASE_IDLE', 'the service to serve', 120_000, 250);
    const context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
    await context.addInitScript(`sessionStorage.setItem('rayshift.token', ${JSON.stringify(env.tokens.alice)}); ${FIRST_CHART_PROBE}`);
    const times: number[] = [];
    for (let i = 0; i <= NAVIGATIONS; i++) {
      const page = await context.newPage();
      await page.goto(`${dashboard.url}#/rayservices/${TEAM_A}/llm`);
      await page.locator('svg[data-testid=rollout-chart]:not([data-samples="0"])').waitFor({ timeout: 30_000 });
      const ms = (await page.evaluate('window.__firstChartMs')) as number;
      if (i > 0) times.push(ms); // the first navigation warms the HTTP cache and the API server's connections
      await page.close();
    }
    times.sort((a, b) => a - b);
    const median = times[Math.floor(times.length / 2)];
    console.log(`navigation to first chart over ${times.length} loads: median ${median.toFixed(0)} ms, min ${times[0].toFixed(0)} ms, max ${times[times.length - 1].toFixed(0)} ms (goal < ${FIRST_CHART_GOAL_MS} ms) ${median < FIRST_CHART_GOAL_MS ? 'OK' : 'OVER'}`);
  } finally {
    await browser.close();
    await dashboard.close();
    await env.stop();
  }
}

async function main(): Promise<void> {
  const dist = path.join(projectRoot(), 'dist-ui');
  if (!fs.existsSync(path.join(dist, 'index.html'))) throw new Error('dist-ui/ is missing: run `npm run build:ui` first');
  bundleSize(dist);
  await firstChart();
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
