/**
 * Validates manifests against the real `openAPIV3Schema` of the pinned upstream CRDs with ajv.
 * Unknown fields are rejected (as `kubectl apply`'s strict field validation does) wherever the
 * schema does not preserve them; CEL rules (`x-kubernetes-validations`) are left to the real
 * API server tests.
 */
import Ajv, { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import * as fs from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { CrdProject, crdsOf } from '../../lib/crds/catalog';
import { resolveCrdFile } from '../../lib/crds/resolve';

type Json = { [key: string]: unknown };

function strict(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(strict);
  if (typeof schema !== 'object' || schema === null) return schema;
  const out: Json = {};
  for (const [k, v] of Object.entries(schema as Json)) {
    out[k] = k === 'properties' ? Object.fromEntries(Object.entries(v as Json).map(([p, s]) => [p, strict(s)])) : strict(v);
  }
  if (out.properties !== undefined && out.additionalProperties === undefined && out['x-kubernetes-preserve-unknown-fields'] !== true) {
    out.additionalProperties = false;
  }
  return out;
}

function newAjv(): Ajv {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 });
  ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isInteger(n) });
  for (const f of ['float', 'double']) ajv.addFormat(f, { type: 'number', validate: () => true });
  ajv.addFormat('byte', /^[A-Za-z0-9+/]*={0,2}$/);
  return ajv;
}

/** Schema validators keyed by `apiVersion/kind` (e.g. `ray.io/v1/RayService`). */
export type SchemaSet = Map<string, ValidateFunction>;

/** Compiles a validator for every served version of every CRD object given. */
export function compileCrds(crds: unknown[]): SchemaSet {
  const ajv = newAjv();
  const out: SchemaSet = new Map();
  for (const crd of crds) {
    const spec = (crd as Json).spec as Json;
    const kind = (spec.names as Json).kind as string;
    for (const v of spec.versions as Json[]) {
      if (v.served === false) continue;
      const schema = ((v.schema as Json).openAPIV3Schema ?? {}) as Json;
      out.set(`${spec.group}/${v.name}/${kind}`, ajv.compile(strict(schema) as Json));
    }
  }
  return out;
}

/** Loads and compiles every CRD of one pinned project release (resolved from ../shared/crds or its pinned URL). */
export async function loadProjectSchemas(project: CrdProject, version: string): Promise<SchemaSet> {
  const docs: unknown[] = [];
  for (const crd of crdsOf(project, version)) {
    const file = await resolveCrdFile(crd);
    for (const doc of parseAllDocuments(fs.readFileSync(file, 'utf8'))) {
      const value = doc.toJSON();
      if (value) docs.push(value);
    }
  }
  return compileCrds(docs);
}

/** Validates a manifest; returns ajv's errors as `instancePath: message` lines (empty when valid). */
export function schemaErrors(schemas: SchemaSet, manifest: Json): string[] {
  const key = `${manifest.apiVersion}/${manifest.kind}`;
  const validate = schemas.get(key);
  if (!validate) throw new Error(`no schema for ${key}; have ${[...schemas.keys()].join(', ')}`);
  if (validate(manifest)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'}: ${e.message}${e.params && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : ''}`);
}
