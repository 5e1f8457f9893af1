/** Deterministic names for new RayClusters (KubeRay uses a random 5-character suffix instead). */
import { createHash } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuv';

/**
 * `<service>-<5 chars>`: the suffix is derived from the spec hash and the smallest counter that
 * gives a name not in `taken`, so the same inputs always give the same name and a cluster still
 * awaiting deletion is never reused.
 */
export function newClusterName(serviceName: string, specHash: string, taken: ReadonlySet<string>): string {
  for (let n = 0; ; n++) {
    const digest = createHash('sha1').update(`${specHash}/${n}`).digest();
    let suffix = '';
    for (let i = 0; i < 5; i++) suffix += ALPHABET[digest[i] & 31];
    const name = `${serviceName}-${suffix}`;
    if (!taken.has(name)) return name;
  }
}
