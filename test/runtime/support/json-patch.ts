/**
 * TEST-ONLY: applies the JSON patches rayshift emits (RFC 6902 `test`, `add`, `remove`, `replace`
 * on object and array paths) to a copy of a document, throwing as the API server refuses when a
 * `test` fails or a path is gone. Production sends patches to the API server and never applies
 * one itself, so this lives with the tests that need an applier (the fake Kubernetes port, the
 * route fixtures).
 */
import type { JsonPatchOp } from '../../../lib/runtime/route/types';
import { isObject, type JsonObject } from '../../../lib/spec/read';

/** Applies `ops` to a copy of `doc`; throws when a `test` fails or a path is not found. */
export function applyJsonPatch<T>(doc: T, ops: readonly JsonPatchOp[]): T {
  const out = structuredClone(doc) as unknown;
  for (const op of ops) {
    const parts = op.path.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
    const last = parts.pop();
    if (last === undefined) throw new Error(`unsupported patch path ${JSON.stringify(op.path)}`);
    let parent: unknown = out;
    for (const p of parts) {
      parent = Array.isArray(parent) ? parent[Number(p)] : isObject(parent) ? parent[p] : undefined;
      if (parent === undefined) throw new Error(`${op.op} ${op.path}: path not found`);
    }
    const container = parent as JsonObject | unknown[];
    if (op.op === 'test') {
      const actual = Array.isArray(container) ? container[Number(last)] : container[last];
      if (!deepEqual(actual, op.value)) throw new Error(`test ${op.path} failed`);
    } else if (op.op === 'remove') {
      if (Array.isArray(container)) container.splice(Number(last), 1);
      else delete container[last];
    } else if (op.op === 'add' && Array.isArray(container)) {
      if (last === '-') container.push(structuredClone(op.value));
      else container.splice(Number(last), 0, structuredClone(op.value));
    } else if (Array.isArray(container)) {
      container[Number(last)] = structuredClone(op.value);
    } else {
      if (op.op === 'replace' && !(last in container)) throw new Error(`replace ${op.path}: path not found`);
      container[last] = structuredClone(op.value);
    }
  }
  return out as T;
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && deepEqual(a[k], b[k]));
  }
  return false;
}
