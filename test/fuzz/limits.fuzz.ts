/**
 * Fuzzing the limits of issue 31 (no cluster needed): the Serve config parser (`parseServeConfig`,
 * `SERVE_CONFIG_LIMITS`) on deep, long, aliased and random YAML; the request-shape guard
 * (`jsonShapeProblem`, `binaryShapeProblem`, `STRUCT_LIMITS`) on deep and huge JSON values and
 * Structs; and page tokens forged, altered or replayed by another caller or query. Every oracle is
 * the test's own: the generators build each input from a value whose depth, node and value counts
 * they know (or count with the functions below), never from the code under test. Figures (inputs,
 * refusals per limit, the slowest call, peak RSS) are printed at the end.
 */
import { isDeepStrictEqual } from 'node:util';
import { fromJson, toBinary, type JsonObject } from '@bufbuild/protobuf';
import { StructSchema } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError } from '@connectrpc/connect';
import fc from 'fast-check';
import { binaryShapeProblem, jsonShapeProblem } from '../../lib/apiserver/input-shape';
import { listNamespacePage } from '../../lib/apiserver/pagination';
import { KubeClient } from '../../lib/runtime/kube/client';
import type { HttpRequest, HttpResponse, StreamHandle, Transport } from '../../lib/runtime/kube/transport';
import { SERVE_CONFIG_LIMITS, STRUCT_LIMITS } from '../../lib/spec/input-limits';
import { parseServeConfig } from '../../lib/spec/serve-config';
import { FuzzFigures, countCrashes, formatFigures, fuzzParams, newFigures, sampleRss, withInput, withInputAsync } from './support/fuzz-run';

const figures: FuzzFigures = newFigures();
/** Refusals by the limit named, and the slowest single call of each kind (ms). */
const refused: Record<string, number> = {};
const slowest: Record<string, number> = {};
const started = performance.now();
let rss: { stop(): void };
let crashes: ReturnType<typeof countCrashes>;

beforeAll(() => {
  rss = sampleRss(figures, 20);
  crashes = countCrashes(figures);
});

afterAll(() => {
  rss.stop();
  crashes.stop();
  const list = (r: Record<string, number>, unit = '') => Object.entries(r).map(([k, v]) => `${k} ${unit ? v.toFixed(1) + unit : v}`).join(', ');
  console.log(`${formatFigures('limits', figures, (performance.now() - started) / 1000)}\nrefused: ${list(refused)}\nslowest call: ${list(slowest, ' ms')}`);
});

/** `work()`, its duration added to `slowest[kind]`. */
function timed<T>(kind: string, work: () => T): T {
  const t = performance.now();
  const result = work();
  slowest[kind] = Math.max(slowest[kind] ?? 0, performance.now() - t);
  return result;
}

function count(limit: string): void {
  refused[limit] = (refused[limit] ?? 0) + 1;
}

function check(ok: boolean, message: () => string): void {
  if (!ok) throw new Error(message());
}

const utf8 = (text: string) => Buffer.byteLength(text, 'utf8');

/** The value's collection depth (a scalar 0) and its nodes as the Serve config limits count them: every collection, scalar and mapping key. */
function yamlShape(value: unknown): { depth: number; nodes: number } {
  if (Array.isArray(value)) {
    const inner = value.map(yamlShape);
    return { depth: 1 + Math.max(0, ...inner.map((s) => s.depth)), nodes: 1 + inner.reduce((n, s) => n + s.nodes, 0) };
  }
  if (value !== null && typeof value === 'object') {
    const inner = Object.values(value).map(yamlShape);
    return { depth: 1 + Math.max(0, ...inner.map((s) => s.depth)), nodes: 1 + inner.reduce((n, s) => n + 1 + s.nodes, 0) };
  }
  return { depth: 0, nodes: 1 };
}

/** A YAML text nesting `depth` collections around a scalar, in one of the styles, and the value it holds. */
function nestedYaml(depth: number, style: 'map' | 'seq' | 'flow' | 'mixed'): { text: string; value: unknown } {
  let value: unknown = 'leaf';
  for (let d = 0; d < depth; d++) value = style === 'seq' || (style === 'mixed' && d % 2 === 1) ? [value] : { k: value };
  if (style === 'flow') return { text: JSON.stringify(value), value };
  const lines: string[] = [];
  const write = (v: unknown, indent: number) => {
    const pad = ' '.repeat(indent);
    if (Array.isArray(v)) {
      if (typeof v[0] !== 'object') lines.push(`${pad}- ${String(v[0])}`);
      else {
        lines.push(`${pad}-`);
        write(v[0], indent + 2);
      }
    } else if (v !== null && typeof v === 'object') {
      const inner = (v as { k: unknown }).k;
      if (typeof inner !== 'object') lines.push(`${pad}k: ${String(inner)}`);
      else {
        lines.push(`${pad}k:`);
        write(inner, indent + 2);
      }
    }
  };
  write(value, 0);
  return { text: lines.join('\n'), value };
}

/** Which limit `error` names, for the figures. */
function limitNamed(error: string): string {
  if (error.includes('bytes')) return 'yaml bytes';
  if (error.includes('levels')) return 'yaml depth';
  if (error.includes('nodes')) return 'yaml nodes';
  if (/alias/i.test(error)) return 'yaml aliases';
  return 'yaml syntax';
}

/** The parse of `text`: exactly one of a value and an error, never a throw. */
function parsed(kind: string, text: string): { value?: unknown; error?: string } {
  const result = timed(kind, () => parseServeConfig(text));
  figures.specs++;
  check((result.value !== undefined) !== (result.error !== undefined) || (result.value === undefined && result.error === undefined && text.trim() === ''), () => `not exactly one of value and error: ${JSON.stringify(result).slice(0, 200)}`);
  if (result.error !== undefined) count(limitNamed(result.error));
  return result;
}

describe('parseServeConfig within SERVE_CONFIG_LIMITS', () => {
  test('deep YAML (1-400 levels, block and flow): the value below the limits, the byte or depth limit named above', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 400 }),
        fc.constantFrom('map' as const, 'seq' as const, 'flow' as const, 'mixed' as const),
        withInput((depth, style) => {
          const { text, value } = nestedYaml(depth, style);
          const result = parsed('deep yaml', text);
          if (utf8(text) > SERVE_CONFIG_LIMITS.maxBytes) check(result.error?.includes(`more than the limit of ${SERVE_CONFIG_LIMITS.maxBytes} bytes`) === true, () => `a ${utf8(text)}-byte text: ${result.error}`);
          else if (depth > SERVE_CONFIG_LIMITS.maxDepth) check(result.error?.includes(`limit of ${SERVE_CONFIG_LIMITS.maxDepth} levels`) === true, () => `depth ${depth}: ${result.error ?? 'parsed'}`);
          else check(isDeepStrictEqual(result.value, value), () => `depth ${depth} within the limits: ${result.error ?? 'another value'}`);
        }),
      ),
      fuzzParams(101, 600),
    );
  });

  test('long YAML lists (1-20,000 items): the value below the limits, the node or byte limit named above', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 20_000 }),
        fc.constantFrom('- a', '- bb', '- {}'),
        withInput((n, item) => {
          const text = `applications:\n${Array(n).fill(item).join('\n')}`;
          const value = { applications: Array(n).fill(item === '- {}' ? {} : item.slice(2)) };
          const { nodes } = yamlShape(value);
          const result = parsed('long yaml', text);
          if (utf8(text) > SERVE_CONFIG_LIMITS.maxBytes) check(result.error?.includes('bytes') === true, () => `${utf8(text)} bytes: ${result.error}`);
          else if (nodes > SERVE_CONFIG_LIMITS.maxNodes) check(result.error?.includes(`limit of ${SERVE_CONFIG_LIMITS.maxNodes} nodes`) === true, () => `${nodes} nodes: ${result.error ?? 'parsed'}`);
          else check(isDeepStrictEqual(result.value, value), () => `${nodes} nodes within the limits: ${result.error ?? 'another value'}`);
        }),
      ),
      fuzzParams(102, 300),
    );
  });

  test('aliased YAML ("billion laughs", 1-12 levels of 1-12 aliases): the expansion below the limits, refused above', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 12 }),
        withInput((levels, fanOut) => {
          const lines = ['l0: &l0 x'];
          let value: unknown = 'x';
          const doc: Record<string, unknown> = { l0: value };
          // Counted, not walked: the expansion has up to 12^12 nodes. The mapping, and per level its key and its value.
          let levelNodes = 1;
          let nodes = 1 + 1 + levelNodes;
          for (let l = 1; l <= levels; l++) {
            lines.push(`l${l}: &l${l} [${Array(fanOut).fill(`*l${l - 1}`).join(', ')}]`);
            value = Array(fanOut).fill(value);
            doc[`l${l}`] = value;
            levelNodes = 1 + fanOut * levelNodes;
            nodes += 1 + levelNodes;
          }
          const aliases = levels * fanOut;
          const result = parsed('aliased yaml', lines.join('\n'));
          if (aliases > SERVE_CONFIG_LIMITS.maxAliases || nodes > SERVE_CONFIG_LIMITS.maxNodes) {
            check(result.error !== undefined && /limit|alias/i.test(result.error), () => `${aliases} aliases expanding to ${nodes} nodes: ${result.error ?? 'parsed'}`);
          } else check(isDeepStrictEqual(result.value, doc), () => `${aliases} aliases, ${nodes} nodes within the limits: ${result.error ?? 'another value'}`);
        }),
      ),
      fuzzParams(103, 400),
    );
  });

  test('random YAML punctuation (up to 70,000 characters): never a throw, and a parsed value is within every limit', () => {
    const piece = fc.constantFrom('[', ']', '{', '}', '- ', '  ', '\n', ': ', '&a ', '*a ', 'x', ', ', '"', "'", '|', '>', '? ', '!!str ', '# ', '<<: ', '\t');
    fc.assert(
      fc.property(
        fc.array(piece, { maxLength: 3_000 }),
        fc.integer({ min: 1, max: 24 }),
        withInput((pieces, repeat) => {
          const text = pieces.join('').repeat(repeat);
          const result = parsed('random yaml', text);
          if (result.value !== undefined) {
            const { depth, nodes } = yamlShape(result.value);
            check(utf8(text) <= SERVE_CONFIG_LIMITS.maxBytes && depth <= SERVE_CONFIG_LIMITS.maxDepth && nodes <= SERVE_CONFIG_LIMITS.maxNodes, () => `parsed beyond a limit: ${utf8(text)} bytes, depth ${depth}, ${nodes} nodes`);
          }
        }),
      ),
      fuzzParams(104, 2_000),
    );
  });
});

/** The JSON value's container depth (a leaf 0) and its values as STRUCT_LIMITS counts them: every object, array and leaf, keys not. */
function jsonShape(value: unknown): { depth: number; values: number } {
  if (value !== null && typeof value === 'object') {
    const inner = (Array.isArray(value) ? value : Object.values(value)).map(jsonShape);
    return { depth: 1 + Math.max(0, ...inner.map((s) => s.depth)), values: 1 + inner.reduce((n, s) => n + s.values, 0) };
  }
  return { depth: 0, values: 1 };
}

/** Objects of known shape: `depth` levels of nesting (objects or arrays) around `width` leaves, inside a wrapper object. */
const shapedJson = fc
  .record({ depth: fc.integer({ min: 0, max: 200 }), width: fc.oneof(fc.integer({ min: 0, max: 100 }), fc.integer({ min: 40_000, max: 80_000 })), arrays: fc.boolean(), leaf: fc.jsonValue({ maxDepth: 2 }) })
  .map(({ depth, width, arrays, leaf }) => {
    let value: unknown = Array(width).fill(leaf);
    for (let d = 0; d < depth; d++) value = arrays ? [value] : { [`k${d % 7}`]: value };
    return { wrapped: value } as JsonObject;
  });

/** Whether a shape problem is the one the oracle expects: depth or values, whichever is passed (either when both). */
function expectedProblem(shape: { depth: number; values: number }, description: string | undefined): boolean {
  const deep = shape.depth > STRUCT_LIMITS.maxDepth;
  const many = shape.values > STRUCT_LIMITS.maxValues;
  if (!deep && !many) return description === undefined;
  if (description === undefined) return false;
  return (deep && description === `nests deeper than the limit of ${STRUCT_LIMITS.maxDepth} levels`) || (many && description === `holds more than the limit of ${STRUCT_LIMITS.maxValues} values in the request`);
}

describe('the request-shape guard: STRUCT_LIMITS before decoding', () => {
  test('JSON text: refused exactly when the value nests deeper or holds more values than the limits (known shapes and random JSON)', () => {
    fc.assert(
      fc.property(
        fc.oneof(shapedJson, fc.jsonValue({ maxDepth: 80 }) as fc.Arbitrary<unknown>),
        withInput((value) => {
          const shape = jsonShape(value);
          const problem = timed('json shape', () => jsonShapeProblem(JSON.stringify(value)));
          figures.requests++;
          if (problem) count(`json ${problem.description.includes('deeper') ? 'depth' : 'values'}`);
          check(expectedProblem(shape, problem?.description), () => `depth ${shape.depth}, ${shape.values} values: ${problem ? `${problem.field}: ${problem.description}` : 'no problem'}`);
        }),
      ),
      fuzzParams(201, 800),
    );
  });

  test('Structs in protobuf: the same verdict as their JSON form, by the same oracle', () => {
    fc.assert(
      fc.property(
        shapedJson,
        withInput((value) => {
          const shape = jsonShape(value);
          let bytes: Uint8Array;
          try {
            bytes = toBinary(StructSchema, fromJson(StructSchema, value));
          } catch {
            // protobuf-es refuses to build some deep Structs itself; nothing of the guard to test then.
            count('struct not encodable');
            return;
          }
          const problem = timed('struct shape', () => binaryShapeProblem(StructSchema, bytes));
          figures.requests++;
          if (problem) count(`struct ${problem.description.includes('deeper') ? 'depth' : 'values'}`);
          check(expectedProblem(shape, problem?.description), () => `depth ${shape.depth}, ${shape.values} values: ${problem ? `${problem.field}: ${problem.description}` : 'no problem'}`);
        }),
      ),
      fuzzParams(202, 150),
    );
  });
});

/** Answers every list with one item and a continue token, recording the continue tokens it was sent. */
class ListTransport implements Transport {
  readonly server = 'https://fake';
  readonly continues: (string | null)[] = [];
  async request(req: HttpRequest): Promise<HttpResponse> {
    this.continues.push(new URL(req.path, 'https://fake').searchParams.get('continue'));
    return { status: 200, headers: { 'content-type': 'application/json' }, text: JSON.stringify({ kind: 'List', metadata: { resourceVersion: '1', continue: 'k8s-continue' }, items: [] }) };
  }
  async stream(): Promise<StreamHandle> {
    throw new Error('no streams');
  }
  close(): void {}
}

const CONFIG_MAPS = { apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true };

describe('page tokens', () => {
  test('a forged, altered, truncated or extended token, or one replayed by another caller or query, is INVALID_ARGUMENT before any Kubernetes call', async () => {
    const transport = new ListTransport();
    const kube = new KubeClient(transport);
    const issuedFor = { pageSize: 1, caller: 'alice', labelSelector: 'a=b' };
    const issued = (await listNamespacePage(kube, CONFIG_MAPS, 'team-a', { ...issuedFor, pageToken: '' })).nextPageToken;
    const raw = Buffer.from(issued, 'base64url');
    // The genuine token opens, for its own caller and query only.
    await listNamespacePage(kube, CONFIG_MAPS, 'team-a', { ...issuedFor, pageToken: issued });
    check(transport.continues.at(-1) === 'k8s-continue', () => `the genuine token resumed at ${transport.continues.at(-1)}`);

    const mutation = fc.oneof(
      fc.record({ kind: fc.constant('flip' as const), at: fc.nat({ max: raw.length - 1 }), bit: fc.integer({ min: 0, max: 7 }) }),
      fc.record({ kind: fc.constant('truncate' as const), at: fc.nat({ max: raw.length - 1 }) }),
      fc.record({ kind: fc.constant('extend' as const), extra: fc.uint8Array({ minLength: 1, maxLength: 64 }) }),
      fc.record({ kind: fc.constant('random' as const), bytes: fc.uint8Array({ maxLength: 9_000 }) }),
      fc.record({ kind: fc.constant('json' as const), cursor: fc.oneof(fc.record({ ns: fc.string() }), fc.record({ c: fc.string(), ns: fc.jsonValue() }), fc.jsonValue()) }),
      fc.record({ kind: fc.constant('text' as const), text: fc.string({ maxLength: 200 }) }),
      fc.record({ kind: fc.constant('replay' as const), caller: fc.constantFrom('bob', 'alice '), namespace: fc.constantFrom('team-a', 'team-b'), selector: fc.constantFrom('a=b', '', 'a=c') }),
    );
    await fc.assert(
      fc.asyncProperty(
        mutation,
        withInputAsync(async (m) => {
          let token = issued;
          let req = { ...issuedFor, pageToken: '' };
          let namespace = 'team-a';
          if (m.kind === 'flip') token = Buffer.from(raw.map((b, i) => (i === m.at ? b ^ (1 << m.bit) : b))).toString('base64url');
          else if (m.kind === 'truncate') token = raw.subarray(0, m.at).toString('base64url');
          else if (m.kind === 'extend') token = Buffer.concat([raw, m.extra]).toString('base64url');
          else if (m.kind === 'random') token = Buffer.from(m.bytes).toString('base64url');
          else if (m.kind === 'json') token = Buffer.from(JSON.stringify(m.cursor) ?? 'null').toString('base64url');
          else if (m.kind === 'text') token = m.text;
          else {
            // Another caller (`alice ` is not alice) in either namespace, with either selector.
            req = { ...req, caller: m.caller, labelSelector: m.selector };
            namespace = m.namespace;
          }
          // An empty token is the first page, not a forgery.
          if (token === '') return;
          const before = transport.continues.length;
          const outcome = await timed('page token', () => listNamespacePage(kube, CONFIG_MAPS, namespace, { ...req, pageToken: token })).then(
            () => 'opened',
            (e: unknown) => e,
          );
          figures.requests++;
          count('page token');
          check(outcome instanceof ConnectError && outcome.code === Code.InvalidArgument, () => `a ${m.kind} token: ${outcome instanceof Error ? outcome.message : String(outcome)}`);
          check(transport.continues.length === before, () => `a ${m.kind} token reached Kubernetes`);
        }),
      ),
      fuzzParams(301, 3_000),
    );
  });
});

test('no uncaught exception or unhandled rejection during the runs', () => {
  expect(crashes.errors).toEqual([]);
  expect(figures.crashes).toBe(0);
});
