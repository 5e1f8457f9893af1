/**
 * Build-time half of the structural-schema check (`lib/spec/structural-schema.ts`): `npm run
 * import` compacts the pinned CRDs of every kind rayshift validates into one node table and writes
 * it to `lib/spec/generated/crd-schemas.ts`, so that `rayshift validate` and the constructs check
 * objects against the real CRDs with no network and no `../shared`. Descriptions and CEL rules are
 * left out; identical subtrees are stored once. test/upstream-crd/crd-schemas.test.ts fails when the
 * committed file is stale.
 */
import * as fs from 'node:fs';
import { parse } from 'yaml';
import { CrdProject, PinnedCrd, SUPPORTED_VERSIONS, crdsOf, newestVersion } from './catalog';
import { loadKubeRayRayServiceCrd } from './regenerate';
import { rayshiftRayServiceCrd } from './rayshift-crd';
import { resolveCrdFile } from './resolve';
import type { SchemaNode, SchemaTable } from '../spec/structural-schema';

/** The generated file, relative to the repository root. */
export const GENERATED_SCHEMAS_PATH = 'lib/spec/generated/crd-schemas.ts';

/** The CRD files of the kinds rayshift validates (RayService, the Gateway API kinds, RoleBasedGroup, CoordinatedPolicy, RoleBasedGroupWarmup). */
const VALIDATED_FILES: readonly string[] = [
  'ray.io_rayservices.yaml',
  'gateway.networking.k8s.io_gatewayclasses.yaml',
  'gateway.networking.k8s.io_gateways.yaml',
  'gateway.networking.k8s.io_httproutes.yaml',
  'gateway.networking.k8s.io_grpcroutes.yaml',
  'workloads.x-k8s.io_rolebasedgroups.yaml',
  'workloads.x-k8s.io_coordinatedpolicies.yaml',
  'workloads.x-k8s.io_rolebasedgroupwarmups.yaml',
];

/**
 * The releases whose schemas are kept: the newest KubeRay and Gateway API (each release there adds
 * fields to the one before, so the newest accepts what the older ones do), and every RBG release,
 * which `--rbg-version` selects.
 */
function releases(): Array<{ project: CrdProject; version: string }> {
  return [
    { project: 'kuberay', version: newestVersion('kuberay') },
    { project: 'gateway-api', version: newestVersion('gateway-api') },
    ...SUPPORTED_VERSIONS.rbg.map((version) => ({ project: 'rbg' as const, version })),
  ];
}

type Json = { [key: string]: unknown };

/** Interns schema nodes: a node equal to one already stored gets its index. */
class NodeTable {
  readonly nodes: SchemaNode[] = [];
  private readonly index = new Map<string, number>();

  add(schema: Json): number {
    const node = this.compact(schema);
    const key = JSON.stringify(node);
    const known = this.index.get(key);
    if (known !== undefined) return known;
    this.nodes.push(node);
    this.index.set(key, this.nodes.length - 1);
    return this.nodes.length - 1;
  }

  private compact(s: Json): SchemaNode {
    const node: { -readonly [K in keyof SchemaNode]: SchemaNode[K] } = {};
    if (typeof s.type === 'string') node.t = s.type as SchemaNode['t'];
    if (isJson(s.properties)) {
      const p: Record<string, number> = {};
      for (const key of Object.keys(s.properties).sort()) p[key] = this.add(s.properties[key] as Json);
      node.p = p;
    }
    if (Array.isArray(s.required) && s.required.length > 0) node.r = [...(s.required as string[])].sort();
    if (isJson(s.items)) node.i = this.add(s.items);
    if (isJson(s.additionalProperties)) node.a = this.add(s.additionalProperties);
    if (s.default !== undefined) node.d = s.default;
    if (Array.isArray(s.enum)) node.e = s.enum;
    if (s['x-kubernetes-preserve-unknown-fields'] === true) node.u = 1;
    if (s['x-kubernetes-int-or-string'] === true) node.s = 1;
    if (s.nullable === true) node.n = 1;
    if (s['x-kubernetes-embedded-resource'] === true) node.x = 1;
    if (typeof s.minimum === 'number') node.min = s.minimum;
    if (typeof s.maximum === 'number') node.max = s.maximum;
    if (s.exclusiveMinimum === true) node.xmin = 1;
    if (s.exclusiveMaximum === true) node.xmax = 1;
    if (typeof s.minLength === 'number') node.minL = s.minLength;
    if (typeof s.maxLength === 'number') node.maxL = s.maxLength;
    if (typeof s.minItems === 'number') node.minI = s.minItems;
    if (typeof s.maxItems === 'number') node.maxI = s.maxItems;
    if (typeof s.minProperties === 'number') node.minP = s.minProperties;
    if (typeof s.maxProperties === 'number') node.maxP = s.maxProperties;
    if (typeof s.pattern === 'string') node.pat = s.pattern;
    return node;
  }
}

function isJson(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Adds every served version of a CRD under `"<label> <group>/<version>/<kind>"`. */
function addCrd(table: NodeTable, roots: Record<string, number>, label: string, crd: Json): void {
  const spec = crd.spec as Json;
  const group = String(spec.group);
  const kind = String((spec.names as Json).kind);
  for (const version of spec.versions as Json[]) {
    if (version.served !== true) continue;
    roots[`${label} ${group}/${String(version.name)}/${kind}`] = table.add((version.schema as Json).openAPIV3Schema as Json);
  }
}

/** Builds the table from the pinned CRDs (../shared/crds, the cache or the pinned URLs) and the rayshift CRD built from the newest KubeRay's. */
export async function buildSchemaTable(): Promise<SchemaTable> {
  const table = new NodeTable();
  const roots: Record<string, number> = {};
  for (const { project, version } of releases()) {
    const files: PinnedCrd[] = crdsOf(project, version).filter((c) => VALIDATED_FILES.includes(c.file));
    for (const pinned of files) {
      const crd = parse(fs.readFileSync(await resolveCrdFile(pinned), 'utf8'), { maxAliasCount: -1 }) as Json;
      addCrd(table, roots, `${project}@${version}`, crd);
    }
  }
  const kuberay = newestVersion('kuberay');
  addCrd(table, roots, `rayshift@${kuberay}`, rayshiftRayServiceCrd(await loadKubeRayRayServiceCrd(kuberay)) as Json);
  return { nodes: table.nodes, roots };
}

/** The text of the generated module. */
export async function renderSchemaTable(): Promise<string> {
  const json = JSON.stringify(await buildSchemaTable());
  return [
    '// Generated by `npm run import` (lib/crds/schema-table.ts) from the pinned CRDs of every kind rayshift',
    '// validates: their structural schemas without descriptions or CEL rules, identical subtrees stored once.',
    '// Do not edit; test/upstream-crd/crd-schemas.test.ts fails when it is stale.',
    '',
    '/** The `SchemaTable` as JSON text: parsed on first use, which costs less than compiling an object literal of this size. */',
    `export const CRD_SCHEMAS_JSON = ${JSON.stringify(json)};`,
    '',
  ].join('\n');
}
