/**
 * `STRUCT_LIMITS` (`lib/spec/input-limits.ts`) applied to request messages before they are decoded:
 * JSON text and protobuf bytes are walked without building anything, so a 4 MiB body of nested
 * `[[[…` or of a million tiny Struct values is refused in milliseconds instead of costing hundreds of
 * megabytes of decoded objects (a `google.protobuf.Value` holds each JSON value as a message).
 * Counted as JSON counts: every object, array, message and leaf value; keys, map entries and the
 * `Value` wrappers of a Struct are not counted, so one request has the same count in either encoding.
 */
import { ScalarType, type DescField, type DescMessage } from '@bufbuild/protobuf';
import { STRUCT_LIMITS, type StructLimits } from '../spec/input-limits';

/** A limit a request passes: the field where it was passed and what is wrong there. */
export interface ShapeProblem {
  /** Path of the field (`rayService.spec.overlay.a[3]` in JSON, proto names with `*` for Struct keys in binary). */
  readonly field: string;
  readonly description: string;
}

const tooDeep = (limits: StructLimits) => `nests deeper than the limit of ${limits.maxDepth} levels`;
const tooMany = (limits: StructLimits) => `holds more than the limit of ${limits.maxValues} values in the request`;

/** The first limit the JSON text `text` passes, or undefined (malformed JSON is left to the parser). */
export function jsonShapeProblem(text: string, limits: StructLimits = STRUCT_LIMITS): ShapeProblem | undefined {
  // Per open container: whether it is an object, its current key (offsets into `text`) or index.
  const objects: boolean[] = [];
  const keyStart: number[] = [];
  const keyEnd: number[] = [];
  const index: number[] = [];
  let values = 0;
  let expectKey = false;
  let inLiteral = false;
  const field = () => objects.map((isObject, d) => (isObject ? `${d === 0 ? '' : '.'}${text.slice(keyStart[d], keyEnd[d])}` : `[${index[d]}]`)).join('');
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      inLiteral = false;
      const start = i + 1;
      i = closingQuote(text, start);
      const d = objects.length - 1;
      if (expectKey && d >= 0 && objects[d]) {
        keyStart[d] = start;
        keyEnd[d] = i;
        expectKey = false;
      } else if (++values > limits.maxValues) return { field: field(), description: tooMany(limits) };
      continue;
    }
    if (c === 0x7b || c === 0x5b) {
      inLiteral = false;
      if (++values > limits.maxValues) return { field: field(), description: tooMany(limits) };
      if (objects.length + 1 > limits.maxDepth) return { field: field(), description: tooDeep(limits) };
      objects.push(c === 0x7b);
      keyStart.push(i);
      keyEnd.push(i);
      index.push(0);
      expectKey = c === 0x7b;
    } else if (c === 0x7d || c === 0x5d) {
      inLiteral = false;
      objects.pop();
      keyStart.pop();
      keyEnd.pop();
      index.pop();
    } else if (c === 0x2c) {
      inLiteral = false;
      const d = objects.length - 1;
      if (d >= 0 && objects[d]) expectKey = true;
      else if (d >= 0) index[d]++;
    } else if (c === 0x3a || c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) {
      inLiteral = false;
    } else if (!inLiteral) {
      // The first character of a number, `true`, `false` or `null`.
      inLiteral = true;
      if (++values > limits.maxValues) return { field: field(), description: tooMany(limits) };
    }
  }
  return undefined;
}

/**
 * The offset of the quote that closes the JSON string starting at `start` (or the text's length):
 * found with `indexOf`, which skips a long string (a 2.6 MB Serve config) many times faster than a
 * loop over its characters, then kept only when an even number of backslashes precede it.
 */
function closingQuote(text: string, start: number): number {
  for (let j = start; ; j++) {
    j = text.indexOf('"', j);
    if (j < 0) return text.length;
    let backslashes = 0;
    while (j - 1 - backslashes >= start && text.charCodeAt(j - 1 - backslashes) === 0x5c) backslashes++;
    if (backslashes % 2 === 0) return j;
  }
}

/** A message being walked: where its bytes end, how deep it is and the field it is the value of. */
interface Frame {
  readonly desc: DescMessage;
  readonly end: number;
  readonly depth: number;
  readonly via?: DescField;
  /** A map entry: its value is walked as a member of the map's message. */
  readonly entry?: boolean;
}

const VALUE = 'google.protobuf.Value';
const STRUCT = 'google.protobuf.Struct';
const LIST_VALUE = 'google.protobuf.ListValue';

const fieldsByNumber = new WeakMap<DescMessage, Map<number, DescField>>();

function fieldOf(desc: DescMessage, number: number): DescField | undefined {
  let fields = fieldsByNumber.get(desc);
  if (!fields) fieldsByNumber.set(desc, (fields = new Map(desc.fields.map((f) => [f.number, f]))));
  return fields.get(number);
}

/** The proto path of `last` read inside `frames` (built only for an error): Struct keys are `*`, list items `[*]`. */
function pathOf(frames: readonly Frame[], last: DescField | undefined): string {
  let path = '';
  const step = (parent: DescMessage, f: DescField) => {
    if (parent.typeName === VALUE) return;
    if (parent.typeName === STRUCT) path += '.*';
    else if (parent.typeName === LIST_VALUE) path += '[*]';
    else path += path ? `.${f.name}` : f.name;
  };
  // A map entry names its map; the value inside it adds nothing more.
  for (let i = 1; i < frames.length; i++) if (!frames[i - 1].entry) step(frames[i - 1].desc, frames[i].via!);
  const top = frames[frames.length - 1];
  if (last && !top.entry) step(top.desc, last);
  return path;
}

/**
 * The first limit the protobuf encoding `bytes` of a `desc` message passes, or undefined. Bytes that
 * are no message of `desc` are left to the decoder, which refuses them.
 */
export function binaryShapeProblem(desc: DescMessage, bytes: Uint8Array, limits: StructLimits = STRUCT_LIMITS): ShapeProblem | undefined {
  let at = 0;
  const varint = (): number | undefined => {
    let value = 0;
    for (let shift = 0; shift < 64; shift += 7) {
      if (at >= bytes.length) return undefined;
      const b = bytes[at++];
      if (shift < 49) value += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) return value;
    }
    return undefined;
  };
  const frames: Frame[] = [{ desc, end: bytes.length, depth: 1 }];
  let values = 1;
  while (frames.length > 0) {
    const frame = frames[frames.length - 1];
    if (at >= frame.end) {
      at = frame.end;
      frames.pop();
      continue;
    }
    const tag = varint();
    if (tag === undefined) return undefined;
    const number = Math.floor(tag / 8);
    const wire = tag & 7;
    let length = 0;
    if (wire === 0) {
      if (varint() === undefined) return undefined;
    } else if (wire === 1 || wire === 5) {
      length = wire === 1 ? 8 : 4;
    } else if (wire === 2) {
      const n = varint();
      if (n === undefined || at + n > frame.end) return undefined;
      length = n;
    } else return undefined;
    const start = at;
    at += length;
    // A map key is neither a level nor a value.
    if (frame.entry && number !== 2) continue;
    const f = frame.entry ? frame.via : fieldOf(frame.desc, number);
    if (f?.fieldKind === 'map' && wire === 2 && !frame.entry) {
      at = start;
      frames.push({ desc: frame.desc, end: start + length, depth: frame.depth, via: f, entry: true });
      continue;
    }
    const sub = f === undefined ? undefined : f.fieldKind === 'message' || (f.fieldKind === 'list' && f.listKind === 'message') || (f.fieldKind === 'map' && f.mapKind === 'message') ? f.message : undefined;
    if (sub && wire === 2) {
      // A Struct's Value wraps the value it holds: not a level or a value of its own.
      const transparent = sub.typeName === VALUE;
      const depth = transparent ? frame.depth : frame.depth + 1;
      if (!transparent && ++values > limits.maxValues) return { field: pathOf(frames, f), description: tooMany(limits) };
      if (depth > limits.maxDepth) return { field: pathOf(frames, f), description: tooDeep(limits) };
      at = start;
      frames.push({ desc: sub, end: start + length, depth, via: f });
      continue;
    }
    // A scalar; packed repeated scalars hold many values in one field.
    values += wire === 2 && f?.fieldKind === 'list' && !isLengthDelimited(f) ? packedCount(f, bytes, start, start + length) : 1;
    if (values > limits.maxValues) return { field: pathOf(frames, f), description: tooMany(limits) };
  }
  return undefined;
}

/** Whether a list's scalar is a string or bytes (never packed). */
function isLengthDelimited(f: DescField): boolean {
  return f.fieldKind === 'list' && f.listKind === 'scalar' && (f.scalar === ScalarType.STRING || f.scalar === ScalarType.BYTES);
}

const FIXED64: readonly ScalarType[] = [ScalarType.DOUBLE, ScalarType.FIXED64, ScalarType.SFIXED64];
const FIXED32: readonly ScalarType[] = [ScalarType.FLOAT, ScalarType.FIXED32, ScalarType.SFIXED32];

/** The values of a packed field: fixed-width ones by length, varints by their last bytes (below 0x80). */
function packedCount(f: DescField, bytes: Uint8Array, start: number, end: number): number {
  const scalar = f.fieldKind === 'list' && f.listKind === 'scalar' ? f.scalar : undefined;
  if (scalar !== undefined && FIXED64.includes(scalar)) return Math.floor((end - start) / 8);
  if (scalar !== undefined && FIXED32.includes(scalar)) return Math.floor((end - start) / 4);
  let n = 0;
  for (let i = start; i < end; i++) if (bytes[i] < 0x80) n++;
  return n;
}
