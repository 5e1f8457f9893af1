/**
 * Node's heap sized from a container's memory limit. Left to itself, Node sizes its heap from the
 * machine's memory (4 GiB of old space and 32 MiB semi-spaces on a 24 GiB node), not the container's,
 * so it collects too late: `rayshift api-server` under 2,000 calls at concurrency 50 peaked at
 * 380 MiB RSS against a 256 Mi limit (bench/apiserver-memory.bench.ts, docs/api-server.md).
 */

/** A memory quantity (`256Mi`, `1Gi`, `268435456`, `300M`) in MiB; undefined when it is no quantity this reads. */
export function quantityMiB(quantity: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(quantity.trim());
  if (!m) return undefined;
  const unit: Record<string, number> = { '': 1, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4, k: 1e3, M: 1e6, G: 1e9, T: 1e12 };
  return (Number(m[1]) * unit[m[2] ?? '']) / 1024 ** 2;
}

/**
 * `NODE_OPTIONS` for a container limited to `limitMiB`: old space half the limit (the rest holds
 * the young generation, compiled code, TLS and socket buffers and the native heap, about 70 MiB
 * measured besides the JavaScript heap) and 2 MiB semi-spaces (young collections more often and
 * smaller: -100 MiB at the peak measured, for more frequent scavenges of a few ms).
 */
export function nodeHeapOptions(limitMiB: number): string {
  return `--max-old-space-size=${Math.floor(limitMiB / 2)} --max-semi-space-size=2`;
}

/** The container env that sizes Node's heap from `resources`' memory limit: `NODE_OPTIONS`, or nothing without a limit this reads. */
export function nodeHeapEnv(resources: { limits?: { [key: string]: { value: unknown } } } | undefined): { name: string; value: string }[] {
  const limit = resources?.limits?.memory?.value;
  const limitMiB = limit === undefined ? undefined : quantityMiB(String(limit));
  return limitMiB === undefined ? [] : [{ name: 'NODE_OPTIONS', value: nodeHeapOptions(limitMiB) }];
}
