/**
 * The event-loop stall of one authorized `validate_only` create carrying a hostile Serve config (the
 * 2.6 MB YAML list of issue 31, refused by the 64 KiB limit) and of one with a legal 60 KB config,
 * on a real kube-apiserver with the API server in this process. Each request runs `--requests`
 * times one after the other; prints the longest event-loop delay of each (`monitorEventLoopDelay`
 * at 1 ms resolution), their median and maximum, and the load average, since a loaded machine
 * stretches every figure. Never asserts.
 *
 *   npx tsx bench/apiserver-stall.bench.ts [--requests 20]
 */
import * as os from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { TEAM_A, rayServiceBody, startApiEnv } from '../test/apiserver/support/api-env';
import { largeLegalServeConfig } from '../test/apiserver/support/load-burst';

const CREATE = `/apis/rayshift/v1/namespaces/${TEAM_A}/rayservices?validate_only=true`;
const LIST_2_6M = Array.from({ length: 650_000 }, () => '- a').join('\n');

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

async function main(): Promise<void> {
  const requests = arg('requests', 20);
  const env = await startApiEnv();
  try {
    for (const [name, serveConfigV2, status] of [
      ['hostile 2.6 MB list', LIST_2_6M, 400],
      ['legal 60 KB config', largeLegalServeConfig(), 200],
    ] as const) {
      const body = rayServiceBody('stall');
      const payload = { ...body, spec: { ...(body.spec as object), serveConfigV2 } };
      // Warm-up: the review caches, the code paths.
      await env.rest('POST', CREATE, payload);
      const stalls: number[] = [];
      for (let i = 0; i < requests; i++) {
        const delay = monitorEventLoopDelay({ resolution: 1 });
        delay.enable();
        const answer = await env.rest('POST', CREATE, payload);
        delay.disable();
        if (answer.status !== status) throw new Error(`${name}: HTTP ${answer.status} ${answer.text.slice(0, 300)}`);
        stalls.push(delay.max / 1e6);
      }
      const sorted = [...stalls].sort((a, b) => a - b);
      console.log(`${name}: HTTP ${status}; longest event-loop delay per request (ms): median ${sorted[Math.floor(sorted.length / 2)].toFixed(1)}, max ${sorted[sorted.length - 1].toFixed(1)}; load average ${os.loadavg()[0].toFixed(1)}`);
      console.log(`  each: ${stalls.map((s) => s.toFixed(0)).join(' ')}`);
    }
  } finally {
    await env.stop();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
