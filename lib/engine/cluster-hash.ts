/**
 * The hash that decides when a RayService needs a new RayCluster, ignoring the same fields as
 * KubeRay's `GenerateHashWithoutReplicasAndWorkersToDelete`. The value differs from KubeRay's
 * annotation (KubeRay hashes Go struct order; this hashes sorted keys), so compare it only with
 * hashes made by this function.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../spec/canonical-json';

/** Any JSON value. */
export type JsonValue = null | boolean | number | string | readonly JsonValue[] | { readonly [key: string]: JsonValue };

type JsonObject = { readonly [key: string]: JsonValue };

const BASE32_HEX = '0123456789ABCDEFGHIJKLMNOPQRSTUV';

/**
 * SHA-1 (base32hex, 32 characters) of a RayClusterSpec (an object or its JSON text) without
 * `suspend`, `upgradeStrategy`, head and worker pod-template `tolerations` and `schedulingGates`,
 * and per worker group `replicas`, `minReplicas`, `maxReplicas`, `scaleStrategy.workersToDelete`.
 * Keys are sorted at every level and `null` members count as absent, so key order and explicit
 * nulls never change the hash.
 */
export function clusterSpecHash(rayClusterSpec: JsonValue | string): string {
  const spec: JsonValue = typeof rayClusterSpec === 'string' ? (JSON.parse(rayClusterSpec) as JsonValue) : rayClusterSpec;
  const digest = createHash('sha1').update(canonicalJson(withoutIgnoredFields(spec), { omitNullMembers: true })).digest();
  return base32Hex(digest);
}

function withoutIgnoredFields(spec: JsonValue): JsonValue {
  if (!isObject(spec)) return spec;
  const out: Record<string, JsonValue> = omit(spec, ['suspend', 'upgradeStrategy']);
  if (isObject(spec.headGroupSpec)) out.headGroupSpec = withoutPodScheduling(spec.headGroupSpec);
  if (Array.isArray(spec.workerGroupSpecs)) {
    out.workerGroupSpecs = (spec.workerGroupSpecs as readonly JsonValue[]).map((group) => {
      if (!isObject(group)) return group;
      const g: Record<string, JsonValue> = omit(withoutPodScheduling(group), ['replicas', 'minReplicas', 'maxReplicas']);
      if (isObject(group.scaleStrategy)) {
        const strategy = omit(group.scaleStrategy, ['workersToDelete']);
        if (Object.keys(strategy).length === 0) delete g.scaleStrategy;
        else g.scaleStrategy = strategy;
      }
      return g;
    });
  }
  return out;
}

/** A group spec without `template.spec.tolerations` and `template.spec.schedulingGates`. */
function withoutPodScheduling(group: JsonObject): JsonObject {
  const template = group.template;
  if (!isObject(template) || !isObject(template.spec)) return group;
  return { ...group, template: { ...template, spec: omit(template.spec, ['tolerations', 'schedulingGates']) } };
}

function omit(o: JsonObject, keys: readonly string[]): Record<string, JsonValue> {
  const out: Record<string, JsonValue> = {};
  for (const k of Object.keys(o)) if (!keys.includes(k)) out[k] = o[k];
  return out;
}

function isObject(v: JsonValue | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function base32Hex(bytes: Uint8Array): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32_HEX[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
    buffer &= (1 << bits) - 1;
  }
  if (bits > 0) out += BASE32_HEX[(buffer << (5 - bits)) & 31];
  return out;
}
