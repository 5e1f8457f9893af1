/**
 * The pinned CRD schema of each kind rayshift validates, and the structural check of an object
 * against it (`structural-schema.ts`): the first stage of every validation, before the model's
 * rules, which then read the object as the API server would store it.
 *
 * Which CRD: KubeRay's newest pinned release for `ray.io/v1` RayServices and the Gateway API's for
 * its kinds (each release only adds fields to the one before); rayshift's own CRD for
 * `rayshift.dev/v1alpha1`; for RoleBasedGroups, CoordinatedPolicies and warmups the release named
 * by `rbgVersion`, else the newest release that serves the object's version.
 */
import { CRD_SCHEMAS_JSON } from './generated/crd-schemas';
import type { RbgRelease } from './rbg-releases';
import { JsonObject } from './read';
import { SchemaCheck, SchemaTable, checkStructure } from './structural-schema';

let table: SchemaTable | undefined;

/** The generated table, parsed once. */
function schemas(): SchemaTable {
  table ??= JSON.parse(CRD_SCHEMAS_JSON) as SchemaTable;
  return table;
}

/** How a schema's source is named in messages, by the project part of its key. */
const PROJECT_NAMES: Readonly<Record<string, string>> = { kuberay: 'KubeRay', 'gateway-api': 'Gateway API', rbg: 'RBG', rayshift: 'rayshift' };

/** Which pinned schema an object is checked against. */
export interface PinnedSchemaOptions {
  /** The RBG release of RoleBasedGroups, CoordinatedPolicies and warmups. @default the newest that serves the object's version */
  readonly rbgVersion?: RbgRelease;
}

/** The schema key (`"<project>@<release> <apiVersion>/<kind>"`) of an object, or undefined when no pinned CRD serves its apiVersion and kind. */
export function pinnedSchemaKey(apiVersion: string, kind: string, options: PinnedSchemaOptions = {}): string | undefined {
  const suffix = ` ${apiVersion}/${kind}`;
  const keys = Object.keys(schemas().roots).filter((k) => k.endsWith(suffix));
  const release = options.rbgVersion;
  const chosen = release === undefined ? keys : keys.filter((k) => !k.startsWith('rbg@') || k.startsWith(`rbg@${release}.`));
  // Keys are in catalog order, oldest release first.
  return chosen[chosen.length - 1];
}

/** "KubeRay v1.7.0's RayService CRD", from a schema key. */
function sourceName(key: string): string {
  const [release, type] = key.split(' ');
  const [project, version] = release.split('@');
  const kind = type.slice(type.lastIndexOf('/') + 1);
  return `${PROJECT_NAMES[project] ?? project} ${version}'s ${kind} CRD`;
}

/**
 * Checks an object against the pinned CRD of its apiVersion and kind: unknown fields (with the
 * closest known name), types, enums, bounds, patterns and required fields, and the object as the
 * API server would store it (pruned, defaulted). Undefined when no pinned CRD serves the type, or
 * the release `rbgVersion` names does not serve it.
 */
export function checkPinnedSchema(manifest: JsonObject, options: PinnedSchemaOptions = {}): (SchemaCheck & { readonly schema: string }) | undefined {
  const key = pinnedSchemaKey(String(manifest.apiVersion ?? ''), String(manifest.kind ?? ''), options);
  if (key === undefined) return undefined;
  return { ...checkStructure(manifest, schemas(), schemas().roots[key], sourceName(key)), schema: key };
}
