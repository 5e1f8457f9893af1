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
import type { Problem, ValidationResult } from './problem';
import { JsonObject } from './read';
import { SchemaCheck, SchemaTable, checkStructure, declaresPath } from './structural-schema';

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
  // rayshift's own CRD has no release of its own: it is built from KubeRay's.
  return project === 'rayshift' ? `rayshift's ${kind} CRD` : `${PROJECT_NAMES[project] ?? project} ${version}'s ${kind} CRD`;
}

/**
 * Where else a field unknown to schema `key` is declared: another version or release of the same
 * kind ("rayshift's RayService CRD (rayshift.dev/v1alpha1) has it"), for the message.
 */
function declaredElsewhere(key: string, path: string): string | undefined {
  const kind = key.slice(key.lastIndexOf('/') + 1);
  const others = Object.keys(schemas().roots).filter((k) => k !== key && k.endsWith(`/${kind}`) && declaresPath(schemas(), schemas().roots[k], path));
  if (others.length === 0) return undefined;
  const apiVersion = (k: string) => k.slice(k.indexOf(' ') + 1, k.lastIndexOf('/'));
  return `${others.map((k) => `${sourceName(k)} (${apiVersion(k)})`).join(' and ')} ${others.length === 1 ? 'has' : 'have'} it`;
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
  return { ...checkStructure(manifest, schemas(), schemas().roots[key], sourceName(key), (path) => declaredElsewhere(key, path)), schema: key };
}

/**
 * `problems` but those at a path where `ruled` holds an error: when the schema and a rule of the
 * model find fault with the same field, the rule's message, which knows what the field is for,
 * is the one printed (one line per problem). `key` says which object a problem belongs to when the
 * lists hold several.
 */
export function withoutRuledPaths<T extends Problem>(problems: readonly T[], ruled: readonly T[], key: (p: T) => string = (p) => p.path): T[] {
  const faulted = new Set(ruled.filter((p) => p.severity === 'error').map(key));
  return problems.filter((p) => !faulted.has(key(p)));
}

/**
 * Validates an object as the API server would store it: the pinned CRD's structural check first
 * (`checkPinnedSchema`), then `rules` on the defaulted object (unknown fields kept, so that a rule
 * that knows why one is misplaced says so, and is printed instead of the schema's line). Objects
 * of a type no pinned CRD serves go to `rules` as they are.
 */
export function validateAsStored(manifest: JsonObject, rules: (stored: JsonObject) => ValidationResult, options: PinnedSchemaOptions = {}): ValidationResult {
  const check = checkPinnedSchema(manifest, options);
  if (check === undefined) return rules(manifest);
  const ruled = rules(check.defaulted);
  const structural = withoutRuledPaths(check.problems, ruled.errors);
  return {
    errors: [...structural.filter((p) => p.severity === 'error'), ...ruled.errors],
    warnings: [...structural.filter((p) => p.severity === 'warning'), ...ruled.warnings],
  };
}
