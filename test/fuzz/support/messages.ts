/**
 * Generated request messages of the API's own descriptors: the proto3 JSON form of any message
 * (every field optional, values near what the handlers accept: the test namespaces, short names,
 * enum names and numbers), with RayService specs drawn from the spec fuzzer's RayService shapes, and
 * then JSON noise (wrong types, unknown keys) or byte noise (flips, truncation) on the encoding.
 */
import { ScalarType, fromJson, toBinary, type DescField, type DescMessage } from '@bufbuild/protobuf';
import fc from 'fast-check';
import { junk } from './fuzz-values';
import { shapedRayService, withNoise } from './spec-arbitraries';

/** Namespaces and names the handlers reach Kubernetes with: the test users' namespaces, names that exist or not, and names Kubernetes refuses. */
export const namespaceValue = fc.constantFrom('team-a', 'team-a', 'team-b', 'default', 'kube-system', '', 'Team-A', 'a'.repeat(64), '../x', 'team-a/x');
export const nameValue = fc.oneof(
  fc.constantFrom('llm', 'fuzz', 'a', 'missing', '', 'LLM', 'a'.repeat(48), 'a'.repeat(254), 'x.y', '..', 'a/b', 'a%2Fb', '\u00e9', ' '),
  fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/),
);

/** A ProtoJSON value for one scalar type: valid mostly, out of range or of the wrong form sometimes. */
function scalarJson(field: DescField, scalar: ScalarType): fc.Arbitrary<unknown> {
  const name = field.name;
  if (scalar === ScalarType.STRING) {
    if (name === 'namespace') return namespaceValue;
    if (name === 'name') return nameValue;
    if (name === 'page_token') return fc.oneof(fc.constantFrom('', 'x', 'eyJ9', '%%%', 'a'.repeat(600)), fc.base64String({ maxLength: 40 }));
    if (name === 'label_selector') return fc.constantFrom('', 'app=llm', 'a in (b,c)', '!!', 'a=' + 'b'.repeat(100), 'a=b,,', '=');
    if (name === 'etag') return fc.constantFrom('', '1', '"1"', 'W/"x"', 'abc');
    return fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom('', 'x'.repeat(300)));
  }
  if (scalar === ScalarType.BOOL) return fc.oneof({ arbitrary: fc.boolean(), weight: 5 }, { arbitrary: fc.constantFrom('true', 1, null), weight: 1 });
  if (scalar === ScalarType.BYTES) return fc.oneof(fc.base64String({ maxLength: 24 }), fc.constantFrom('!!', '=='));
  if (scalar === ScalarType.DOUBLE || scalar === ScalarType.FLOAT) return fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom('NaN', 'Infinity', '-Infinity', '1e400', 'x'));
  const is64 = [ScalarType.INT64, ScalarType.UINT64, ScalarType.FIXED64, ScalarType.SFIXED64, ScalarType.SINT64].includes(scalar);
  const small = fc.oneof(
    { arbitrary: fc.integer({ min: -5, max: 600 }), weight: 6 },
    { arbitrary: fc.constantFrom(2 ** 31 - 1, 2 ** 31, -(2 ** 31) - 1, 2 ** 32, 1.5, '12', '1e3', 'abc', ''), weight: 1 },
  );
  return is64 ? fc.oneof(small, fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }).map(String)) : small;
}

/** Values for google.protobuf well-known types in their JSON forms, by type name. */
const WELL_KNOWN: Record<string, fc.Arbitrary<unknown>> = {
  'google.protobuf.Struct': fc.oneof(fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 }), junk),
  'google.protobuf.Value': fc.jsonValue({ maxDepth: 3 }),
  'google.protobuf.ListValue': fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }),
  'google.protobuf.Timestamp': fc.constantFrom('2026-01-15T10:00:00Z', '1970-01-01T00:00:00.5Z', '0001-01-01T00:00:00Z', '10000-01-01T00:00:00Z', 'yesterday', ''),
  'google.protobuf.Duration': fc.constantFrom('1s', '1.5s', '-1s', '315576000001s', 's', ''),
  'google.protobuf.FieldMask': fc.constantFrom('spec', 'spec.serveConfigV2,labels', 'nope', 'a..b', '', 'spec.rayClusterConfig'),
  'google.protobuf.Empty': fc.constant({}),
};

/** `RayServiceSpec` in the API's JSON: the spec fuzzer's RayService shapes with enum names mapped to the API's. */
const STRATEGY_ENUM: Record<string, string> = {
  NewCluster: 'UPGRADE_STRATEGY_TYPE_NEW_CLUSTER',
  NewClusterWithIncrementalUpgrade: 'UPGRADE_STRATEGY_TYPE_NEW_CLUSTER_WITH_INCREMENTAL_UPGRADE',
  None: 'UPGRADE_STRATEGY_TYPE_NONE',
};

/** A model enum name in the API's spelling (`ray-serve-error-ratio` → `ANALYSIS_TEMPLATE_RAY_SERVE_ERROR_RATIO`); other values as they are. */
function enumName(prefix: string, value: unknown): unknown {
  return typeof value === 'string' && value !== '' ? `${prefix}_${value.toUpperCase().replace(/-/g, '_')}` : value;
}

/** `spec.rayshift.analysis` in the API's JSON: its enums by the API's names. */
function apiAnalysis(a: Record<string, any>): Record<string, unknown> {
  const metrics = Array.isArray(a.metrics) ? a.metrics.map((m: any) => (m && typeof m === 'object' && 'template' in m ? { ...m, template: enumName('ANALYSIS_TEMPLATE', m.template) } : m)) : a.metrics;
  return { ...a, metrics, ...('onFailure' in a ? { onFailure: enumName('ANALYSIS_FAILURE_ACTION', a.onFailure) } : {}) };
}

const apiRayServiceSpec = shapedRayService.map((m) => {
  const spec = m.spec as Record<string, any>;
  const out: Record<string, unknown> = { ...spec };
  if (spec.upgradeStrategy && typeof spec.upgradeStrategy === 'object') {
    // Only known names are mapped: a junk `type` may be an object without a prototype, which no key lookup can convert.
    const type: unknown = spec.upgradeStrategy.type;
    out.upgradeStrategy = { ...spec.upgradeStrategy, type: typeof type === 'string' && Object.hasOwn(STRATEGY_ENUM, type) ? STRATEGY_ENUM[type] : type };
  }
  if (spec.rayshift && typeof spec.rayshift === 'object' && !Array.isArray(spec.rayshift)) {
    const { routeKind, analysis } = spec.rayshift;
    out.rayshift = { ...spec.rayshift, ...(typeof routeKind === 'string' ? { routeKind: `ROUTE_KIND_${routeKind}` } : {}), ...(analysis && typeof analysis === 'object' && !Array.isArray(analysis) ? { analysis: apiAnalysis(analysis) } : {}) };
  }
  delete out.excludeHeadPodFromServeSvc; // not a field of the API's spec
  return out;
});

/** Whole messages by type name, where a generic draw would rarely be valid. */
const SHAPED: Record<string, fc.Arbitrary<unknown>> = {
  'rayshift.v1.RayServiceSpec': apiRayServiceSpec,
};

function fieldJson(field: DescField, depth: number): fc.Arbitrary<unknown> {
  switch (field.fieldKind) {
    case 'scalar':
      return scalarJson(field, field.scalar);
    case 'enum':
      return fc.oneof({ arbitrary: fc.constantFrom(...field.enum.values.map((v) => v.name)), weight: 6 }, { arbitrary: fc.constantFrom(0, 1, 99, -1, 'NOPE', ''), weight: 1 });
    case 'message':
      return messageJson(field.message, depth + 1);
    case 'list': {
      const element = field.listKind === 'scalar' ? scalarJson(field, field.scalar) : field.listKind === 'enum' ? fc.constantFrom(...field.enum.values.map((v) => v.name)) : messageJson(field.message, depth + 1);
      return fc.array(element, { maxLength: 3 });
    }
    case 'map': {
      const value = field.mapKind === 'scalar' ? scalarJson(field, field.scalar) : field.mapKind === 'enum' ? fc.constantFrom(...field.enum.values.map((v) => v.name)) : messageJson(field.message, depth + 1);
      const key = field.mapKey === ScalarType.STRING ? fc.oneof(fc.constantFrom('app', 'rayshift.dev/x', 'kubernetes.io/y', 'Bad Key', ''), fc.string({ maxLength: 10 })) : fc.integer({ min: -3, max: 3 }).map(String);
      return fc.dictionary(key, value, { maxKeys: 3 });
    }
  }
}

const cache = new Map<string, fc.Arbitrary<Record<string, unknown>>>();

/** The ProtoJSON form of a `desc` message: each field present or not, oneofs with at most one member set; depth-limited. */
export function messageJson(desc: DescMessage, depth = 0): fc.Arbitrary<Record<string, unknown>> {
  const shaped = SHAPED[desc.typeName] ?? WELL_KNOWN[desc.typeName];
  if (shaped) return shaped as fc.Arbitrary<Record<string, unknown>>;
  if (depth > 4) return fc.constant({});
  const key = `${desc.typeName}@${depth}`;
  const known = cache.get(key);
  if (known) return known;
  const plain = desc.fields.filter((f) => f.oneof === undefined);
  const record = fc.record(Object.fromEntries(plain.map((f) => [f.jsonName, fieldJson(f, depth)])), { requiredKeys: [] });
  const oneofs = desc.oneofs.map((o) => fc.option(fc.constantFrom(...o.fields).chain((f) => fieldJson(f, depth).map((v) => [f.jsonName, v] as const)), { nil: undefined }));
  const arb = fc.tuple(record, fc.tuple(...oneofs)).map(([r, members]) => ({ ...r, ...Object.fromEntries(members.filter((m) => m !== undefined)) }) as Record<string, unknown>);
  cache.set(key, arb);
  return arb;
}

/** A request body in JSON: the message mostly, with JSON noise or as text that is not JSON sometimes. */
export function jsonBody(desc: DescMessage): fc.Arbitrary<Buffer> {
  return fc
    .oneof(
      { arbitrary: messageJson(desc).map((v) => JSON.stringify(v)), weight: 8 },
      { arbitrary: withNoise(messageJson(desc)).map((v) => JSON.stringify(v) ?? 'null'), weight: 4 },
      { arbitrary: fc.constantFrom('', '{', '[]', 'null', '"x"', '{"a":1}{', '{"__proto__":{"x":1}}', '{"name":"\\ud800"}', '\u0000', '1e999'), weight: 1 },
      { arbitrary: fc.string({ maxLength: 60 }), weight: 1 },
    )
    .map((text) => Buffer.from(text, 'utf8'));
}

/** The message's binary encoding when its JSON is valid for `desc`, else an empty message. */
export function protoBytes(desc: DescMessage, json: unknown): Buffer {
  try {
    return Buffer.from(toBinary(desc, fromJson(desc, json as never, { ignoreUnknownFields: true })));
  } catch {
    return Buffer.alloc(0);
  }
}

/** Changes to binary bytes: none, flips, truncation, appended garbage, or random bytes instead. */
const byteNoise = fc.oneof(
  { arbitrary: fc.constant({ kind: 'none' as const }), weight: 6 },
  { arbitrary: fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), mask: fc.integer({ min: 1, max: 255 }) }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('truncate' as const), keep: fc.nat() }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('append' as const), bytes: fc.uint8Array({ minLength: 1, maxLength: 16 }) }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('random' as const), bytes: fc.uint8Array({ maxLength: 64 }) }), weight: 1 },
);

/** A request body in binary protobuf: the message's encoding, with byte noise sometimes. */
export function protoBody(desc: DescMessage): fc.Arbitrary<Buffer> {
  return fc.tuple(messageJson(desc), byteNoise).map(([json, noise]) => {
    const bytes = protoBytes(desc, json);
    switch (noise.kind) {
      case 'none':
        return bytes;
      case 'flip': {
        if (bytes.length === 0) return bytes;
        const copy = Buffer.from(bytes);
        copy[noise.at % copy.length] ^= noise.mask;
        return copy;
      }
      case 'truncate':
        return bytes.subarray(0, bytes.length === 0 ? 0 : noise.keep % bytes.length);
      case 'append':
        return Buffer.concat([bytes, Buffer.from(noise.bytes)]);
      case 'random':
        return Buffer.from(noise.bytes);
    }
  });
}
