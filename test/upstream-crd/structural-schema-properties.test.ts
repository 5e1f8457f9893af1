/**
 * Properties of `rayshift validate` over the pinned CRDs themselves (read from ../shared/crds, the
 * cache or the pinned URLs, not from the generated table, so a field the table lost fails here):
 *
 * - every field name of every kind rayshift validates, misspelt by one edit, is a problem at its
 *   path naming the intended field (an error where the API server would drop it, a warning where
 *   the CRD keeps unknown fields but the controller reads none);
 * - for every field with a CRD default, leaving it out gives the same verdict as writing the
 *   default, in a document of each kind the examples synthesize: validation sees the object after
 *   the API server's defaulting, as upstream's own validation does.
 */
import * as fs from 'node:fs';
import { parse, stringify } from 'yaml';
import { CrdProject, crdsOf, newestVersion, SUPPORTED_VERSIONS } from '../../lib/crds/catalog';
import { loadKubeRayRayServiceCrd } from '../../lib/crds/regenerate';
import { rayshiftRayServiceCrd } from '../../lib/crds/rayshift-crd';
import { resolveCrdFile } from '../../lib/crds/resolve';
import { checkFiles } from '../../lib/cli/documents';
import { checkPinnedSchema } from '../../lib/spec/pinned-schemas';
import type { RbgRelease } from '../../lib/spec/rbg-releases';
import { prng } from '../support/prng';
import { sampleManifests } from '../support/sample-charts';

type Json = { [key: string]: any };

/** One served version of a pinned CRD, with the `--rbg-version` that selects it. */
interface Target {
  readonly label: string;
  readonly apiVersion: string;
  readonly kind: string;
  readonly schema: Json;
  readonly rbgVersion?: RbgRelease;
}

const KINDS = ['RayService', 'GatewayClass', 'Gateway', 'HTTPRoute', 'GRPCRoute', 'RoleBasedGroup', 'CoordinatedPolicy', 'RoleBasedGroupWarmup'];

async function targets(): Promise<Target[]> {
  const out: Target[] = [];
  const add = (label: string, crd: Json, rbgVersion?: RbgRelease) => {
    if (!KINDS.includes(crd.spec.names.kind)) return;
    for (const v of crd.spec.versions) {
      if (v.served) out.push({ label: `${label} ${crd.spec.group}/${v.name}/${crd.spec.names.kind}`, apiVersion: `${crd.spec.group}/${v.name}`, kind: crd.spec.names.kind, schema: v.schema.openAPIV3Schema, rbgVersion });
    }
  };
  const releases: Array<[CrdProject, string, RbgRelease?]> = [
    ['kuberay', newestVersion('kuberay')],
    ['gateway-api', newestVersion('gateway-api')],
    ...SUPPORTED_VERSIONS.rbg.map((v): [CrdProject, string, RbgRelease] => ['rbg', v, v.slice(0, 4) as RbgRelease]),
  ];
  for (const [project, version, rbg] of releases) {
    for (const pinned of crdsOf(project, version)) add(`${project}@${version}`, parse(fs.readFileSync(await resolveCrdFile(pinned), 'utf8'), { maxAliasCount: -1 }), rbg);
  }
  add(`rayshift`, rayshiftRayServiceCrd(await loadKubeRayRayServiceCrd(newestVersion('kuberay'))));
  return out;
}

/** A step from a schema node to a child: a field, a list's item, or a map's value. */
type Step = { field: string } | { item: true } | { value: true };

interface Site {
  readonly steps: Step[];
  readonly node: Json;
  /** The API server keeps unknown fields here (the node, or the list it is an item of, preserves them). */
  readonly keepsUnknown: boolean;
}

/** Every object node with declared fields, reached from the root, but inside free-form subtrees (never checked) and `metadata` at the root (ObjectMeta, checked apart). */
function objectSites(root: Json): Site[] {
  const out: Site[] = [];
  const walk = (node: Json, steps: Step[], parentPreserves: boolean) => {
    const preserves = node['x-kubernetes-preserve-unknown-fields'] === true;
    if (node.properties) {
      out.push({ steps, node, keepsUnknown: preserves || parentPreserves });
      for (const [field, child] of Object.entries<Json>(node.properties)) {
        if (steps.length === 0 && field === 'metadata') continue;
        walk(child, [...steps, { field }], false);
      }
    }
    if (node.items) walk(node.items, [...steps, { item: true }], preserves);
    if (node.additionalProperties && typeof node.additionalProperties === 'object') walk(node.additionalProperties, [...steps, { value: true }], false);
  };
  walk(root, [], false);
  return out;
}

/** The path of steps as validate prints it. */
function pathOf(steps: Step[]): string {
  return steps.map((s, i) => ('field' in s ? (i === 0 ? s.field : `.${s.field}`) : 'item' in s ? '[0]' : '.k')).join('');
}

/** `manifest` with empty objects and one-item lists created along `steps`; returns the object at the end. */
function reach(manifest: Json, steps: Step[]): Json {
  let here: any = manifest;
  steps.forEach((step, i) => {
    const next = steps[i + 1];
    const fresh = () => (next !== undefined && 'item' in next ? [] : {});
    if ('item' in step) {
      if (here.length === 0 || typeof here[0] !== 'object' || here[0] === null) here[0] = fresh();
      here = here[0];
    } else {
      const key = 'field' in step ? step.field : 'k';
      if (typeof here[key] !== 'object' || here[key] === null) here[key] = fresh();
      here = here[key];
    }
  });
  return here;
}

/** One edit of `name` (drop, swap, replace or insert a lowercase letter), from `random`. */
function misspell(name: string, random: () => number): string {
  const at = Math.floor(random() * name.length);
  const letter = 'abcdefghijklmnopqrstuvwxyz'[Math.floor(random() * 26)];
  switch (Math.floor(random() * 4)) {
    case 0:
      return name.length > 1 ? name.slice(0, at) + name.slice(at + 1) : `${name}${letter}`;
    case 1:
      return at + 1 < name.length && name[at] !== name[at + 1] ? name.slice(0, at) + name[at + 1] + name[at] + name.slice(at + 2) : `${name}${letter}`;
    case 2:
      return name.slice(0, at) + letter + name.slice(at + 1);
    default:
      return name.slice(0, at) + letter + name.slice(at);
  }
}

let all: Target[] = [];
beforeAll(async () => {
  all = await targets();
});

test('every kind rayshift validates is covered, in every release it pins', () => {
  expect(all.map((t) => t.label).sort()).toEqual(
    [
      'kuberay@v1.7.0 ray.io/v1/RayService',
      'kuberay@v1.7.0 ray.io/v1alpha1/RayService',
      'gateway-api@v1.6.1 gateway.networking.k8s.io/v1/GatewayClass',
      'gateway-api@v1.6.1 gateway.networking.k8s.io/v1beta1/GatewayClass',
      'gateway-api@v1.6.1 gateway.networking.k8s.io/v1/Gateway',
      'gateway-api@v1.6.1 gateway.networking.k8s.io/v1beta1/Gateway',
      'gateway-api@v1.6.1 gateway.networking.k8s.io/v1/HTTPRoute',
      'gateway-api@v1.6.1 gateway.networking.k8s.io/v1beta1/HTTPRoute',
      'gateway-api@v1.6.1 gateway.networking.k8s.io/v1/GRPCRoute',
      'rbg@v0.6.0 workloads.x-k8s.io/v1alpha1/RoleBasedGroup',
      'rbg@v0.7.0 workloads.x-k8s.io/v1alpha1/RoleBasedGroup',
      'rbg@v0.7.0 workloads.x-k8s.io/v1alpha2/RoleBasedGroup',
      'rbg@v0.7.0 workloads.x-k8s.io/v1alpha2/CoordinatedPolicy',
      'rbg@v0.8.0-alpha.5 workloads.x-k8s.io/v1alpha1/RoleBasedGroup',
      'rbg@v0.8.0-alpha.5 workloads.x-k8s.io/v1alpha2/RoleBasedGroup',
      'rbg@v0.8.0-alpha.5 workloads.x-k8s.io/v1alpha2/CoordinatedPolicy',
      'rbg@v0.8.0-alpha.5 workloads.x-k8s.io/v1alpha2/RoleBasedGroupWarmup',
      'rayshift rayshift.dev/v1alpha1/RayService',
    ].sort(),
  );
});

test('a one-edit misspelling of every field is a problem at its path naming the intended field', () => {
  const random = prng(30);
  const failures: string[] = [];
  let checked = 0;
  for (const target of all) {
    // One check per distinct set of fields: a pod template's container is the same question at every place it appears.
    const seen = new Set<string>();
    for (const site of objectSites(target.schema)) {
      const fields = Object.keys(site.node.properties);
      const key = `${site.keepsUnknown}:${fields.sort().join(',')}`;
      if (seen.has(key)) continue;
      seen.add(key);
      for (const field of fields) {
        const typo = misspell(field, random);
        if (fields.some((f) => f.toLowerCase() === typo.toLowerCase())) continue;
        const manifest: Json = { apiVersion: target.apiVersion, kind: target.kind, metadata: { name: 'typo' } };
        reach(manifest, site.steps)[typo] = 'x';
        const result = checkPinnedSchema(manifest, target.rbgVersion ? { rbgVersion: target.rbgVersion } : {});
        const path = site.steps.length === 0 ? typo : `${pathOf(site.steps)}.${typo}`;
        const problem = result?.problems.find((p) => p.path === path);
        const severity = site.keepsUnknown ? 'warning' : 'error';
        checked++;
        if (problem?.severity !== severity || !new RegExp(`did you mean (".*" or )?"${field}"`).test(problem.message)) {
          failures.push(`${target.label} ${path} (for ${field}): ${problem ? `${problem.severity}: ${problem.message}` : 'no problem'}`);
        }
      }
    }
  }
  expect(failures).toEqual([]);
  // Thousands of distinct fields: a walk that found none would pass the loop above vacuously.
  expect(checked).toBeGreaterThan(2000);
});

/** Every field with a CRD default, as the steps to it. */
function defaultSites(schema: Json): Array<{ steps: Step[]; value: unknown }> {
  const out: Array<{ steps: Step[]; value: unknown }> = [];
  const walk = (node: Json, steps: Step[]) => {
    if (steps.length > 0 && node.default !== undefined) out.push({ steps, value: node.default });
    if (node['x-kubernetes-preserve-unknown-fields'] === true && !node.properties) return;
    for (const [field, child] of Object.entries<Json>(node.properties ?? {})) if (!(steps.length === 0 && field === 'status')) walk(child, [...steps, { field }]);
    if (node.items) walk(node.items, [...steps, { item: true }]);
  };
  walk(schema, []);
  return out;
}

/** `validate`'s verdict on one document: every problem, as printed. */
function verdict(manifest: Json, rbgVersion?: RbgRelease): string[] {
  const { problems } = checkFiles(['-'], () => stringify(manifest, { aliasDuplicateObjects: false }), rbgVersion ? { rbgVersion } : {});
  return problems.map((p) => `${p.severity} ${p.path}: ${p.message}`).sort();
}

test('for every field with a CRD default, leaving it out gives the same verdict as writing the default', () => {
  const samples = sampleManifests() as Json[];
  const failures: string[] = [];
  let compared = 0;
  for (const target of all.filter((t) => !t.label.startsWith('gateway-api') || t.apiVersion.endsWith('/v1'))) {
    // The newest release that serves the version is the one validate picks without --rbg-version; older RBG releases are selected explicitly.
    const base = samples.find((m) => m.apiVersion === target.apiVersion && m.kind === target.kind);
    if (base === undefined) continue;
    for (const { steps, value } of defaultSites(target.schema)) {
      const field = steps[steps.length - 1];
      if (!('field' in field)) continue;
      const without = structuredClone(base);
      delete reach(without, steps.slice(0, -1))[field.field];
      const written = structuredClone(base);
      reach(written, steps.slice(0, -1))[field.field] = structuredClone(value);
      const a = verdict(without, target.rbgVersion);
      const b = verdict(written, target.rbgVersion);
      compared++;
      if (JSON.stringify(a) !== JSON.stringify(b)) failures.push(`${target.label} ${pathOf(steps)} (default ${JSON.stringify(value)}): left out ${JSON.stringify(a)} ≠ written ${JSON.stringify(b)}`);
    }
  }
  expect(failures).toEqual([]);
  expect(compared).toBeGreaterThan(300);
});
