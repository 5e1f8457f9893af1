/**
 * Synthesis benchmark: 1,000 RayServices, each with its Gateway and HTTPRoute, built with the
 * rayshift constructs (validation included) and, for the ratio, the same manifests built as raw
 * cdk8s ApiObjects. Each variant runs in its own process so peak memory (max RSS) is its own.
 * Run: `npx tsx bench/synth.bench.ts` (goals: ≤ 3 s, ≤ 1 GiB, ratio ≤ 1.5). Prints; never asserts.
 */
import { execFileSync } from 'node:child_process';
import { ApiObject, App, Chart } from 'cdk8s';
import { Gateway, HttpRoute, RayClusterSpecBuilder, RayService } from '../lib';

const SERVICES = 1000;
const RUNS = 5;

function rayshiftApp(): App {
  const app = new App({ outdir: '/tmp/rayshift-bench' });
  const chart = new Chart(app, 'bench', { namespace: 'bench' });
  for (let i = 0; i < SERVICES; i++) {
    const svc = new RayService(chart, `svc${i}`, {
      metadata: { name: `svc${i}` },
      executor: 'operator',
      rayClusterConfig: new RayClusterSpecBuilder({
        image: 'rayproject/ray:2.52.0-gpu',
        head: { resources: { cpu: '2', memory: '8Gi' } },
        workerGroups: [{ groupName: 'gpu', minReplicas: 1, maxReplicas: 8, resources: { cpu: '8', memory: '32Gi', accelerators: 1 } }],
      }),
      serveConfig: { applications: [{ name: 'app', importPath: 'model.app:build', routePrefix: '/' }] },
      upgradeStrategy: {
        type: 'NewClusterWithIncrementalUpgrade',
        clusterUpgradeOptions: { maxSurgePercent: 20, stepSizePercent: 5, intervalSeconds: 60, gatewayClassName: 'traefik' },
      },
      rayshift: { gatewayRef: { name: `svc${i}-gw` } },
    });
    const gw = new Gateway(chart, `gw${i}`, { metadata: { name: `svc${i}-gw` }, gatewayClass: 'traefik' });
    new HttpRoute(chart, `route${i}`, {
      metadata: { name: `svc${i}-route` },
      parents: [gw],
      rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/' } }], backendRefs: [{ name: `${svc.name}-a-serve-svc`, port: 8000, weight: 100 }] }],
    });
  }
  return app;
}

function rawApp(manifests: { [key: string]: unknown }[]): App {
  const app = new App({ outdir: '/tmp/rayshift-bench' });
  const chart = new Chart(app, 'bench', { namespace: 'bench' });
  manifests.forEach((m, i) => {
    new ApiObject(chart, `o${i}`, m as unknown as { apiVersion: string; kind: string });
  });
  return app;
}

function measure(variant: string): void {
  // The raw variant's input is prepared before timing starts; it is the output to reproduce.
  const manifests = variant === "raw" ? rayshiftApp().charts[0].toJson() : [];
  global.gc?.();
  const start = process.hrtime.bigint();
  const app = variant === 'raw' ? rawApp(manifests) : rayshiftApp();
  const yaml = app.synthYaml();
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  process.stdout.write(JSON.stringify({ ms, maxRssMiB: process.resourceUsage().maxRSS / 1024, bytes: yaml.length }));
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function main(): void {
  const variant = process.argv[2];
  if (variant) {
    measure(variant);
    return;
  }
  const results: Record<string, { ms: number[]; rss: number[]; bytes: number }> = {};
  for (let run = 0; run < RUNS; run++) {
    for (const v of ['rayshift', 'raw']) {
      const out = JSON.parse(execFileSync(process.execPath, [...process.execArgv, __filename, v], { encoding: 'utf8' }));
      const r = (results[v] ??= { ms: [], rss: [], bytes: out.bytes });
      r.ms.push(out.ms);
      r.rss.push(out.maxRssMiB);
    }
  }
  const rs = results.rayshift;
  const raw = results.raw;
  const line = (name: string, r: typeof rs) =>
    `${name.padEnd(9)} ${median(r.ms).toFixed(0).padStart(6)} ms  max RSS ${median(r.rss).toFixed(0).padStart(5)} MiB  ${(r.bytes / 1e6).toFixed(1)} MB YAML`;
  console.log(`synthesis of ${SERVICES} RayServices + Gateways + HTTPRoutes (${3 * SERVICES} objects), median of ${RUNS} runs`);
  console.log(line('rayshift', rs));
  console.log(line('raw', raw));
  console.log(`ratio rayshift/raw: ${(median(rs.ms) / median(raw.ms)).toFixed(2)} (goal ≤ 1.5); goals ≤ 3000 ms, ≤ 1024 MiB`);
}

main();
