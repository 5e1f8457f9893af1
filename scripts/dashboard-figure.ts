/**
 * Renders docs/img/dashboard-failed-gate.png: the rollout page of a RayService whose analysis gate
 * failed, from the built dashboard (`npm run build:ui` first) in Debian's Chromium, fed by the real
 * stack of the browser tests (kube-apiserver, the in-process operator with the TEST-ONLY simulated
 * KubeRay, Gateway and Serve, the rayshift API server, `rayshift dashboard`). Only Prometheus is a
 * stand-in (test/ui/support/stub-prometheus.ts): it answers a passing value until the gate at the
 * first weight passed, then a failing one, so the chart shows a passed and a failed verdict.
 *
 *   npm run docs:figure
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { projectRoot } from '../lib/crds/resolve';
import { TEAM_A } from '../test/apiserver/support/api-env';
import { waitFor } from '../test/support/operator-env';
import { FAILING_VALUE, PASSING_VALUE, createServing, startGatedUpgrade } from '../test/ui/support/failed-gate';
import { startStubPrometheus } from '../test/ui/support/stub-prometheus';
import { startUiEnv } from '../test/ui/support/ui-env';

const NAME = 'chat';
const OUT = path.join(projectRoot(), 'docs', 'img', 'dashboard-failed-gate.png');

async function main(): Promise<void> {
  const env = await startUiEnv();
  let failing = false;
  const prometheus = await startStubPrometheus(() => (failing ? FAILING_VALUE : PASSING_VALUE));
  try {
    await createServing(env, NAME);
    const { page } = await env.signedInPage(env.api.tokens.alice);
    await page.goto(`${env.dashboard.url}#/rayservices/${TEAM_A}/${NAME}`);
    await page.locator('[data-testid=watch-state][data-state=live]').waitFor();
    await startGatedUpgrade(env, NAME, prometheus.url);
    // Fail from the second gate on: the first one's verdict is Successful.
    await waitFor(async () => {
      const u = (await env.api.rest('GET', `/apis/rayshift/v1/namespaces/${TEAM_A}/rayservices/${NAME}/upgrade`)).body;
      return (u?.analysis?.verdicts ?? []).some((v: { phase?: string }) => v.phase === 'Successful');
    }, 'the first gate to pass', 120_000, 100);
    failing = true;
    await page.locator('[data-testid=run-step][data-phase=Failed]').waitFor({ timeout: 120_000 });
    await page.locator('[data-testid=event][data-reason=AnalysisFailed]').waitFor({ timeout: 30_000 });
    fs.mkdirSync(path.dirname(OUT), { recursive: true });
    await page.screenshot({ path: OUT, fullPage: true });
    console.log(`wrote ${path.relative(projectRoot(), OUT)}`);
  } finally {
    await prometheus.close();
    await env.stop();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
