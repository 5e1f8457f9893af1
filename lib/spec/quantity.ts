/**
 * Kubernetes resource quantities (`500m`, `4Gi`, `1e3`, `2`) read into milli-units, the scale the
 * capacity preflight adds and compares in (CPU's natural unit; exact for every binary suffix).
 * Pure and bounded: a quantity longer than Kubernetes' own limit is no quantity.
 */

const PATTERN = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?\d{1,3})?$/;

const SUFFIX: Readonly<Record<string, number>> = {
  n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60,
};

/** Longest quantity string read; Kubernetes' own parser refuses far shorter ones. */
const MAX_QUANTITY_LENGTH = 64;

/**
 * A quantity (string or JSON number) in milli-units, rounded up as Kubernetes rounds requests
 * (`100m` → 100, `1` → 1000, `1Gi` → 1073741824000); undefined when it is not a quantity.
 */
export function parseQuantityMilli(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? Math.ceil(value * 1000) : undefined;
  if (typeof value !== 'string' || value.length > MAX_QUANTITY_LENGTH) return undefined;
  const m = PATTERN.exec(value.trim());
  if (m === null || m[1] === '-') return undefined;
  const suffix = m[3] ?? '';
  const scale = /^[eE]/.test(suffix) ? 10 ** Number(suffix.slice(1)) : SUFFIX[suffix];
  const milli = Number(m[2]) * scale * 1000;
  if (!Number.isFinite(milli)) return undefined;
  // Round away float noise (0.1 × 1000) before rounding up: 100m is 100, not 101.
  return Math.ceil(Number(milli.toPrecision(12)));
}

/** Milli-units of `resource` shown as a person writes them: cores for cpu, Gi/Mi for byte sizes, counts otherwise. */
export function showQuantity(resource: string, milli: number): string {
  const units = milli / 1000;
  if (resource === 'cpu' || resource.endsWith('.cpu')) return milli % 1000 === 0 ? String(units) : `${milli}m`;
  if (/memory|storage|hugepages/.test(resource)) {
    if (units >= 2 ** 30) return `${round(units / 2 ** 30)}Gi`;
    if (units >= 2 ** 20) return `${round(units / 2 ** 20)}Mi`;
    return String(round(units));
  }
  return String(round(units));
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
