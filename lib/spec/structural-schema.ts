/**
 * What the Kubernetes API server does to a custom object before anything else reads it, done on a
 * compacted copy of the pinned CRD's structural schema (`lib/crds/schema-table.ts` builds it,
 * `generated/crd-schemas.ts` holds it): unknown fields are found (the API server prunes them, so a
 * typo such as `maxSurgePercnt` silently falls back to the default), values are checked against
 * their type, enum, bounds and pattern, `null` in a non-nullable field is dropped, and CRD defaults
 * are applied. The result is the object as the API server would store it, which is what the
 * upstream-derived rules of this model must see: KubeRay's and RBG's own validation runs after
 * the API server's defaulting, never before.
 *
 * Not evaluated: CEL rules (`x-kubernetes-validations`) and `format`; the model's own rules cover
 * the ones rayshift depends on.
 */
import { Problem, show } from './problem';
import { closestFields, didYouMean } from './field-suggestions';
import { JsonObject, isObject } from './read';
import { codePointLength } from './text-length';

/** A JSON type of a structural schema node. */
export type SchemaType = 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';

/**
 * One node of a compacted structural schema. Child nodes are indexes into `SchemaTable.nodes`, so
 * that identical subtrees (every pod template of a CRD, every release of a project) are stored once.
 */
export interface SchemaNode {
  /** `type`. */
  readonly t?: SchemaType;
  /** `properties`: field name → node index. */
  readonly p?: Readonly<Record<string, number>>;
  /** `required`. */
  readonly r?: readonly string[];
  /** `items`: node index. */
  readonly i?: number;
  /** `additionalProperties` (a map's values): node index. */
  readonly a?: number;
  /** `default`. */
  readonly d?: unknown;
  /** `enum`. */
  readonly e?: readonly unknown[];
  /** `x-kubernetes-preserve-unknown-fields: true`. */
  readonly u?: 1;
  /** `x-kubernetes-int-or-string: true`. */
  readonly s?: 1;
  /** `nullable: true`. */
  readonly n?: 1;
  /** `x-kubernetes-embedded-resource: true` (apiVersion, kind and metadata are implied). */
  readonly x?: 1;
  /** `minimum`, `maximum`. */
  readonly min?: number;
  readonly max?: number;
  /** `exclusiveMinimum`, `exclusiveMaximum` (OpenAPI v3.0 booleans). */
  readonly xmin?: 1;
  readonly xmax?: 1;
  /** `minLength`, `maxLength`. */
  readonly minL?: number;
  readonly maxL?: number;
  /** `minItems`, `maxItems`. */
  readonly minI?: number;
  readonly maxI?: number;
  /** `minProperties`, `maxProperties`. */
  readonly minP?: number;
  readonly maxP?: number;
  /** `pattern` (an RE2 expression; checked when JavaScript compiles it the same way). */
  readonly pat?: string;
}

/** Compacted structural schemas of several CRD versions, sharing one node table. */
export interface SchemaTable {
  /** Every node, children before parents. */
  readonly nodes: readonly SchemaNode[];
  /** `"<project>@<release> <apiVersion>/<kind>"` → the root node of that served version's schema. */
  readonly roots: Readonly<Record<string, number>>;
}

/** The outcome of checking one object against its CRD's schema. */
export interface SchemaCheck {
  /** Unknown fields, wrong types, enums, bounds, patterns and missing required fields. */
  readonly problems: Problem[];
  /** The object as the API server would store it: unknown fields pruned, nulls dropped, defaults applied. */
  readonly stored: JsonObject;
  /** The same with the unknown fields kept: what the model's rules read, so that a rule that knows a misplaced field can say why. */
  readonly defaulted: JsonObject;
  /** Paths whose content the schema leaves open (`x-kubernetes-preserve-unknown-fields` with no declared fields): nothing under them was checked. */
  readonly unchecked: string[];
}

/** The fields of `metadata` the API server keeps (ObjectMeta); a CRD's schema only says `type: object`. */
const OBJECT_META_FIELDS: readonly string[] = [
  'annotations', 'creationTimestamp', 'deletionGracePeriodSeconds', 'deletionTimestamp', 'finalizers', 'generateName',
  'generation', 'labels', 'managedFields', 'name', 'namespace', 'ownerReferences', 'resourceVersion', 'selfLink', 'uid',
];

/** Where a field sits, to name it in messages ("a field of clusterUpgradeOptions in KubeRay v1.7.0's RayService"). */
interface Context {
  readonly table: SchemaTable;
  /** "KubeRay v1.7.0's RayService CRD", for messages. */
  readonly source: string;
  readonly kind: string;
  readonly problems: Problem[];
  readonly unchecked: string[];
  readonly elsewhere?: (path: string) => string | undefined;
  /** Keep unknown fields in the output (the rules' view) instead of pruning them (the stored view). */
  readonly keepUnknown: boolean;
}

/**
 * Checks `manifest` against the schema rooted at `root` of `table`, as the API server would on
 * create: every problem at once, and the object it would store. `source` names the schema in
 * messages (e.g. "KubeRay v1.7.0's RayService CRD").
 */
export function checkStructure(manifest: JsonObject, table: SchemaTable, root: number, source: string, elsewhere?: (path: string) => string | undefined): SchemaCheck {
  const kind = typeof manifest.kind === 'string' ? manifest.kind : 'object';
  const context: Context = { table, source, kind, problems: [], unchecked: [], elsewhere, keepUnknown: false };
  const stored = storeObject(manifest, context, root);
  // The same walk keeping unknown fields: the rules' view, so that a rule that knows why a field
  // is misplaced (rayshift's extensions in a ray.io/v1 RayService) still sees it.
  const defaulted = storeObject(manifest, { ...context, problems: [], unchecked: [], keepUnknown: true }, root);
  return { problems: context.problems, stored, defaulted, unchecked: context.unchecked };
}

function storeObject(manifest: JsonObject, context: Context, root: number): JsonObject {
  const rootNode = context.table.nodes[root];
  const stored: JsonObject = {};
  for (const [key, value] of Object.entries(manifest)) {
    if (value === undefined) continue;
    if (key === 'apiVersion' || key === 'kind') setField(stored, key, value);
    else if (key === 'metadata') {
      const meta = checkMetadata(value, context);
      if (meta !== PRUNED) stored.metadata = meta;
    } else if (fieldIndex(rootNode.p, key) !== undefined) {
      const out = walk(value, fieldIndex(rootNode.p, key)!, key, context, false);
      if (out !== PRUNED) setField(stored, key, out);
    } else {
      unknownField(key, key, rootNode, context, false);
      if (context.keepUnknown) setField(stored, key, value);
    }
  }
  applyDefaultsAndRequired(stored, rootNode, '', context, ['apiVersion', 'kind', 'metadata']);
  return stored;
}

/**
 * Whether the schema rooted at `root` declares the field at `path` (`spec.roles[0].name`; list
 * indexes step into items, other names into declared fields or map values).
 */
export function declaresPath(table: SchemaTable, root: number, path: string): boolean {
  let node: SchemaNode | undefined = table.nodes[root];
  for (const step of path.match(/[^.[\]]+|\[\d+\]/g) ?? []) {
    if (node === undefined) return false;
    if (step.startsWith('[')) node = node.i === undefined ? undefined : table.nodes[node.i];
    else if (fieldIndex(node.p, step) !== undefined) node = table.nodes[fieldIndex(node.p, step)!];
    else node = node.a === undefined ? undefined : table.nodes[node.a];
  }
  return node !== undefined;
}

/**
 * The node index of field `key` in `fields`, own properties only: user input can hold `__proto__`
 * or `constructor`, which a plain lookup would find on Object's prototype.
 */
function fieldIndex(fields: Readonly<Record<string, number>> | undefined, key: string): number | undefined {
  return fields !== undefined && Object.prototype.hasOwnProperty.call(fields, key) ? fields[key] : undefined;
}

/** Sets `object[key]` as an own field, `__proto__` included (an assignment would replace the prototype instead). */
function setField(object: JsonObject, key: string, value: unknown): void {
  Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Whether `object` has its own field `key` with a value (JavaScript callers may write `undefined`, which JSON does not carry). */
function hasValue(object: JsonObject, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(object, key) && object[key] !== undefined;
}

/** Marks a value the API server drops (an unknown field, or null where null is not allowed). */
const PRUNED = Symbol('pruned');

function checkMetadata(value: unknown, context: Context): unknown {
  if (value === null) return PRUNED;
  if (!isObject(value)) {
    context.problems.push({ path: 'metadata', message: `must be an object; got ${show(value)}`, severity: 'error' });
    return value;
  }
  const out: JsonObject = {};
  for (const [key, v] of Object.entries(value)) {
    if (!OBJECT_META_FIELDS.includes(key)) {
      const message = unknownMessage(key, 'metadata', OBJECT_META_FIELDS, context, 'so the API server would drop it');
      context.problems.push({ path: `metadata.${key}`, message, severity: 'error' });
      if (context.keepUnknown) setField(out, key, v);
      continue;
    }
    if ((key === 'labels' || key === 'annotations') && v !== null && v !== undefined) {
      if (!isObject(v)) context.problems.push({ path: `metadata.${key}`, message: `must be a map of strings; got ${show(v)}`, severity: 'error' });
      else {
        for (const [k, s] of Object.entries(v)) {
          if (typeof s !== 'string') context.problems.push({ path: `metadata.${key}${fieldPath(k)}`, message: `must be a string (quote it in YAML); got ${show(s)}`, severity: 'error' });
        }
      }
    }
    if (v !== null) setField(out, key, v);
  }
  return out;
}

/** `.name`, or `["a.b/c"]` for a key that is not a plain identifier (label and annotation keys). */
function fieldPath(key: string): string {
  return /^[A-Za-z_$][\w$-]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

function join(path: string, key: string): string {
  return path === '' ? key : `${path}${fieldPath(key)}`;
}

/** The last field name of a path, for "is not a field of X" (`spec.roles[0]` → roles). */
function ownerName(path: string, context: Context): string {
  const match = /([A-Za-z_$][\w$-]*)(\[\d+\])*$/.exec(path);
  return match ? match[1] : context.kind;
}

function walk(value: unknown, index: number, path: string, context: Context, preserved: boolean): unknown {
  const node = context.table.nodes[index];
  if (value === null) {
    if (node.n) return null;
    // The API server drops a null in a non-nullable field before defaulting (so `field:` with no
    // value in YAML means "unset", and the default applies).
    return PRUNED;
  }
  if (!typeMatches(value, node)) {
    context.problems.push({ path, message: `must be ${describeType(node)}; got ${show(value)}`, severity: 'error' });
    return value;
  }
  checkValue(value, node, path, context);
  if (Array.isArray(value)) {
    return value.map((item, i) => {
      if (node.i === undefined) return item;
      // Only an object's fields are dropped when null; a null item is a wrong type.
      if (item === null && !context.table.nodes[node.i].n) {
        context.problems.push({ path: `${path}[${i}]`, message: `must be ${describeType(context.table.nodes[node.i])}; got null`, severity: 'error' });
        return item;
      }
      return walk(item, node.i, `${path}[${i}]`, context, Boolean(node.u) || preserved);
    });
  }
  if (isObject(value)) return walkObject(value, node, path, context, preserved);
  return value;
}

function walkObject(value: JsonObject, node: SchemaNode, path: string, context: Context, preserved: boolean): JsonObject {
  const keepsUnknown = Boolean(node.u) || preserved;
  if (keepsUnknown && node.p === undefined && node.a === undefined) {
    context.unchecked.push(path);
    return value;
  }
  const out: JsonObject = {};
  for (const [key, child] of Object.entries(value)) {
    if (child === undefined) continue;
    const at = join(path, key);
    const known = fieldIndex(node.p, key);
    if (known !== undefined) {
      const v = walk(child, known, at, context, false);
      if (v !== PRUNED) setField(out, key, v);
    } else if (node.a !== undefined) {
      const v = walk(child, node.a, at, context, false);
      if (v !== PRUNED) setField(out, key, v);
    } else if (node.x && (key === 'apiVersion' || key === 'kind' || key === 'metadata')) {
      setField(out, key, child);
    } else {
      unknownField(key, at, node, context, keepsUnknown);
      if (keepsUnknown || context.keepUnknown) setField(out, key, child);
    }
  }
  applyDefaultsAndRequired(out, node, path, context, []);
  return out;
}

/**
 * Applies the defaults of `node`'s properties that `object` lacks (and, as the API server does,
 * the defaults inside each default), then reports required fields still missing.
 */
function applyDefaultsAndRequired(object: JsonObject, node: SchemaNode, path: string, context: Context, implied: readonly string[]): void {
  for (const [key, index] of Object.entries(node.p ?? {})) {
    const child = context.table.nodes[index];
    if (!hasValue(object, key) && child.d !== undefined) {
      const v = walk(structuredClone(child.d), index, join(path, key), context, false);
      if (v !== PRUNED) setField(object, key, v);
    }
  }
  for (const key of node.r ?? []) {
    if (!hasValue(object, key) && !implied.includes(key)) {
      context.problems.push({ path: join(path, key), message: `is required by ${context.source}`, severity: 'error' });
    }
  }
}

function unknownField(key: string, at: string, node: SchemaNode, context: Context, kept: boolean): void {
  const parent = at.slice(0, at.length - fieldPath(key).length);
  const owner = parent === '' ? context.kind : /\]$/.test(parent) ? `an item of ${ownerName(parent, context)}` : ownerName(parent, context);
  const known = [...Object.keys(node.p ?? {}), ...(node.x ? ['apiVersion', 'kind', 'metadata'] : [])];
  // The CRD keeps unknown fields here (x-kubernetes-preserve-unknown-fields), but the controller
  // decodes into its Go type, which has no such field: stored, never read. Elsewhere it is pruned.
  const consequence = kept ? 'the API server keeps it here, but the controller does not read it' : 'so the API server would drop it';
  // A field of another version or release of this kind (rayshift's extensions in a ray.io/v1
  // RayService, an RBG v0.8 field checked for v0.7) is named as such rather than as a typo.
  const hint = context.elsewhere?.(at);
  const message = hint === undefined ? unknownMessage(key, owner, known, context, consequence) : `${unknownMessage(key, owner, [], context, consequence).replace(/; it has no fields$/, '')}; ${hint}`;
  context.problems.push({ path: at, message, severity: kept ? 'warning' : 'error' });
}

/** "\"maxSurgePercnt\" is not a field of clusterUpgradeOptions in KubeRay v1.7.0's RayService CRD, so …; did you mean \"maxSurgePercent\"?" */
function unknownMessage(key: string, owner: string, known: readonly string[], context: Context, consequence: string): string {
  const suggestions = closestFields(key, known);
  const base = `${JSON.stringify(key)} is not a field of ${owner} in ${context.source}${consequence.startsWith('so') ? ', ' : ': '}${consequence}`;
  if (suggestions.length > 0) return `${base}; ${didYouMean(suggestions)}`;
  const sorted = [...known].sort();
  const list = sorted.length <= 15 ? sorted.join(', ') : `${sorted.slice(0, 15).join(', ')}, … (${sorted.length} in all)`;
  return sorted.length === 0 ? `${base}; it has no fields` : `${base}; known: ${list}`;
}

function typeMatches(value: unknown, node: SchemaNode): boolean {
  if (node.s) return typeof value === 'string' || (typeof value === 'number' && Number.isInteger(value));
  switch (node.t) {
    case undefined:
      return true;
    case 'object':
      return isObject(value);
    case 'array':
      return Array.isArray(value);
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
  }
}

function describeType(node: SchemaNode): string {
  if (node.s) return 'an integer or a string';
  const article: Record<SchemaType, string> = {
    object: 'an object',
    array: 'a list',
    string: 'a string (quote it in YAML)',
    integer: 'an integer',
    number: 'a number',
    boolean: 'true or false',
  };
  return node.t === undefined ? 'a value' : article[node.t];
}

/** Enum, bounds, lengths and pattern of a value whose type matched. */
function checkValue(value: unknown, node: SchemaNode, path: string, context: Context): void {
  const fail = (message: string) => context.problems.push({ path, message, severity: 'error' });
  if (node.e !== undefined && !node.e.some((allowed) => allowed === value)) {
    fail(`${show(value)} is not one of ${node.e.map((v) => show(v)).join(', ')}`);
    return;
  }
  if (typeof value === 'number') {
    if (node.min !== undefined && (node.xmin ? value <= node.min : value < node.min)) fail(`${value} is below the minimum ${node.xmin ? '>' : '≥'} ${node.min}`);
    if (node.max !== undefined && (node.xmax ? value >= node.max : value > node.max)) fail(`${value} is above the maximum ${node.xmax ? '<' : '≤'} ${node.max}`);
  }
  if (typeof value === 'string') {
    if (node.minL !== undefined || node.maxL !== undefined) {
      const length = codePointLength(value);
      if (node.minL !== undefined && length < node.minL) fail(`${show(value)} is shorter than ${node.minL} characters`);
      if (node.maxL !== undefined && length > node.maxL) fail(`${show(value).slice(0, 60)} is longer than ${node.maxL} characters (${length})`);
    }
    if (node.pat !== undefined && !matchesPattern(value, node.pat)) fail(`${show(value)} does not match the pattern ${node.pat}`);
  }
  if (Array.isArray(value)) {
    if (node.minI !== undefined && value.length < node.minI) fail(`has ${value.length} items; at least ${node.minI} required`);
    if (node.maxI !== undefined && value.length > node.maxI) fail(`has ${value.length} items; at most ${node.maxI} allowed`);
  }
  if (isObject(value)) {
    const n = Object.keys(value).length;
    if (node.minP !== undefined && n < node.minP) fail(`has ${n} fields; at least ${node.minP} required`);
    if (node.maxP !== undefined && n > node.maxP) fail(`has ${n} fields; at most ${node.maxP} allowed`);
  }
}

const PATTERNS = new Map<string, RegExp | undefined>();

/** RE2 patterns compiled as JavaScript ones; a pattern JavaScript reads differently is not checked. */
function matchesPattern(value: string, pattern: string): boolean {
  if (!PATTERNS.has(pattern)) {
    let compiled: RegExp | undefined;
    try {
      compiled = new RegExp(pattern, 'u');
    } catch {
      compiled = undefined;
    }
    PATTERNS.set(pattern, compiled);
  }
  const re = PATTERNS.get(pattern);
  return re === undefined || re.test(value);
}
