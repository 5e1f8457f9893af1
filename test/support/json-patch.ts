/**
 * TEST-ONLY JSON Patch (RFC 6902) applier for the fakes and simulators, written apart from
 * production code so that a fake API server does not agree with the writer by sharing its code.
 * The subset the route writers send: `test`, `add`, `replace`, `remove`, with RFC 6901 pointers.
 * Like kube-apiserver, any op whose target (or, for `add`, whose parent) is missing fails the
 * whole patch, and the document given is never modified.
 */

/** One operation of the subset. */
export type TestJsonPatchOp =
  | { readonly op: 'test' | 'add' | 'replace'; readonly path: string; readonly value: unknown }
  | { readonly op: 'remove'; readonly path: string };

/** A patch that does not apply: a failed `test`, a missing path, a bad array index. */
export class JsonPatchFailure extends Error {}

type Container = Record<string, unknown> | unknown[];

/** RFC 6901: "/a/b~1c" → ["a", "b/c"]. */
function tokens(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new JsonPatchFailure(`path ${JSON.stringify(pointer)} is not a JSON pointer`);
  return pointer.substring(1).split('/').map((t) => t.split('~1').join('/').split('~0').join('~'));
}

function isContainer(v: unknown): v is Container {
  return typeof v === 'object' && v !== null;
}

/** An array index token: digits only, no leading zero, within `max`. */
function index(token: string, max: number, path: string): number {
  if (!/^(0|[1-9][0-9]*)$/.test(token) || Number(token) > max) throw new JsonPatchFailure(`${path}: index ${token} is out of range`);
  return Number(token);
}

function child(parent: Container, token: string, path: string): unknown {
  if (Array.isArray(parent)) return parent[index(token, parent.length - 1, path)];
  if (!Object.prototype.hasOwnProperty.call(parent, token)) throw new JsonPatchFailure(`${path}: no member ${JSON.stringify(token)}`);
  return parent[token];
}

function same(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => same(x, b[i]));
  if (isContainer(a) && isContainer(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => Object.prototype.hasOwnProperty.call(b, k) && same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
  }
  return a === b;
}

/** Applies `ops` in order to a copy of `doc`; throws `JsonPatchFailure` (and changes nothing) when one does not apply. */
export function applyTestJsonPatch<T>(doc: T, ops: readonly TestJsonPatchOp[]): T {
  let root: unknown = JSON.parse(JSON.stringify(doc));
  for (const op of ops) {
    const path = tokens(op.path);
    if (path.length === 0) {
      if (op.op === 'test') {
        if (!same(root, op.value)) throw new JsonPatchFailure('test of the whole document failed');
      } else if (op.op === 'remove') throw new JsonPatchFailure('cannot remove the whole document');
      else root = JSON.parse(JSON.stringify(op.value));
      continue;
    }
    const last = path[path.length - 1];
    let parent: unknown = root;
    for (const t of path.slice(0, -1)) {
      if (!isContainer(parent)) throw new JsonPatchFailure(`${op.op} ${op.path}: path not found`);
      parent = child(parent, t, op.path);
    }
    if (!isContainer(parent)) throw new JsonPatchFailure(`${op.op} ${op.path}: path not found`);
    const value = 'value' in op ? JSON.parse(JSON.stringify(op.value ?? null)) : undefined;
    if (op.op === 'test') {
      if (!same(child(parent, last, op.path), op.value)) throw new JsonPatchFailure(`test ${op.path} failed`);
    } else if (Array.isArray(parent)) {
      if (op.op === 'add') parent.splice(last === '-' ? parent.length : index(last, parent.length, op.path), 0, value);
      else {
        const i = index(last, parent.length - 1, op.path);
        if (op.op === 'remove') parent.splice(i, 1);
        else parent[i] = value;
      }
    } else {
      if (op.op !== 'add') child(parent, last, op.path); // remove and replace need the member to exist
      if (op.op === 'remove') delete parent[last];
      else parent[last] = value;
    }
  }
  return root as T;
}
