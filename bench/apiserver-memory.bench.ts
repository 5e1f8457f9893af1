/**
 * Memory of `rayshift api-server` under issue 31's burst: the chart's container (its arguments, its
 * environment, its RBAC, its ServiceAccount's token) run as its own process against a real
 * kube-apiserver, then 2,000 authorized calls at concurrency 50 (test/apiserver/support/load-burst.ts:
 * REST and gRPC reads and lists, `validate_only` creates with 60 KB Serve configs, upgrade watches).
 * Prints the process's RSS after start, after seeding, its peak during the burst (`VmHWM`) and after,
 * and the answers. `--env 'NODE_OPTIONS=<flags>;MALLOC_ARENA_MAX=2|NODE_OPTIONS=|…'` runs one server
 * after the other, each with those variables instead of the chart's (`NODE_OPTIONS=`: none, Node's
 * own heap sizing), to compare. Never asserts; needs `npm run build`.
 *
 *   npx tsx bench/apiserver-memory.bench.ts [--requests 2000] [--concurrency 50] [--rounds 1] [--env '...|...']
 */
import { type ApiEnv, startApiEnv } from '../test/apiserver/support/api-env';
import { spawnChartApiServer } from '../test/apiserver/support/chart-server';
import { type BurstCaller, burstCallers, runBurst, seedBurst } from '../test/apiserver/support/load-burst';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

async function main(): Promise<void> {
  const requests = Number(arg('requests') ?? 2000);
  const concurrency = Number(arg('concurrency') ?? 50);
  const rounds = Number(arg('rounds') ?? 1);
  const variants = (arg('env')?.split('|') ?? ['']).map((v) => Object.fromEntries(v.split(';').filter((kv) => kv.includes('=')).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)])));
  const env = await startApiEnv();
  const callers = burstCallers(env.tokens);
  try {
    for (const [i, overrides] of variants.entries()) await measure(env, callers, requests, concurrency, rounds, overrides, i === 0);
  } finally {
    await env.stop();
  }
}

async function measure(env: ApiEnv, callers: BurstCaller[], requests: number, concurrency: number, rounds: number, overrides: Record<string, string>, seed: boolean): Promise<void> {
  const child = await spawnChartApiServer(env, {}, overrides);
  try {
    const mb = () => {
      const m = child.memory();
      return `RSS ${m.rssMiB.toFixed(0)} MiB, peak ${m.peakMiB.toFixed(0)} MiB`;
    };
    console.log(`environment ${JSON.stringify(overrides)} over the chart's; started: ${mb()}`);
    if (seed) {
      await seedBurst(child.url, env.cp.ca, callers);
      console.log(`seeded: ${mb()}`);
    }
    for (let r = 1; r <= rounds; r++) {
      const answers = await runBurst(child.url, env.cp.ca, callers, requests, concurrency);
      console.log(`burst ${r} (${requests} calls, ${concurrency} at a time): ${mb()}; answers ${JSON.stringify(answers)}`);
    }
  } finally {
    await child.stop();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
