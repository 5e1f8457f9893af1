/**
 * "Did you mean …?": the known field names closest to a misspelt one, for the CRD schema check
 * (`structural-schema.ts`) and the Serve config's fields (`serve-schema.ts`).
 */

/**
 * The known field names closest to `key`: a case-insensitive match if there is one, else those at
 * the smallest edit distance (insertions, deletions, substitutions and swaps of neighbours), when
 * it is small for the name's length (1 up to 4 characters, 2 up to 12, 3 beyond).
 */
export function closestFields(key: string, known: readonly string[]): string[] {
  const folded = known.filter((k) => k.toLowerCase() === key.toLowerCase());
  if (folded.length > 0) return folded;
  const limit = key.length <= 4 ? 1 : key.length <= 12 ? 2 : 3;
  let best = limit + 1;
  let out: string[] = [];
  for (const k of known) {
    const d = editDistance(key.toLowerCase(), k.toLowerCase(), best);
    if (d < best) {
      best = d;
      out = [k];
    } else if (d === best) out.push(k);
  }
  return best <= limit ? out.sort() : [];
}

/** Optimal string alignment distance, giving up (returning `cap`) once it exceeds `cap`. */
function editDistance(a: string, b: string, cap: number): number {
  if (Math.abs(a.length - b.length) > cap) return cap + 1;
  let prev2: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, prev2[j - 2] + 1);
      cur.push(d);
      rowMin = Math.min(rowMin, d);
    }
    if (rowMin > cap) return cap + 1;
    prev2 = prev;
    prev = cur;
  }
  return prev[b.length];
}

/** `did you mean "a" or "b"?`, the words every unknown-field message ends with when it has suggestions. */
export function didYouMean(names: readonly string[]): string {
  return `did you mean ${names.map((n) => JSON.stringify(n)).join(' or ')}?`;
}
