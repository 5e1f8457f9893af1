/**
 * Every object the examples and the sample charts synthesize validates against the real CRD
 * schema of every pinned version it claims to support. CRDs come from ../shared/crds or their
 * pinned URLs; a CRD that cannot be resolved fails the test, it is never skipped.
 */
import { SUPPORTED_VERSIONS } from '../../lib/crds/catalog';
import { rayshiftRayServiceCrd } from '../../lib/crds/rayshift-crd';
import { loadKubeRayRayServiceCrd } from '../../lib/crds/regenerate';
import { SchemaSet, compileCrds, loadProjectSchemas, schemaErrors } from '../support/crd-schema';
import { RBG_V08_NAMESPACE, sampleManifests } from '../support/sample-charts';

type Json = { [key: string]: unknown };

/** Which schema sets (by label) must accept this object: by apiVersion, and RBG v0.8 samples by their namespace. */
function targetsOf(manifest: Json): string[] {
  const apiVersion = String(manifest.apiVersion);
  if ((manifest.metadata as Json).namespace === RBG_V08_NAMESPACE) return ['rbg@v0.8.0-alpha.5'];
  if (manifest.kind === 'RoleBasedGroupWarmup') return ['rbg@v0.8.0-alpha.5'];
  if (apiVersion === 'ray.io/v1') return SUPPORTED_VERSIONS.kuberay.map((v) => `kuberay@${v}`);
  if (apiVersion === 'rayshift.dev/v1alpha1') return SUPPORTED_VERSIONS.kuberay.map((v) => `rayshift-from-kuberay@${v}`);
  if (apiVersion.startsWith('gateway.networking.k8s.io/')) return SUPPORTED_VERSIONS['gateway-api'].map((v) => `gateway-api@${v}`);
  if (apiVersion === 'workloads.x-k8s.io/v1alpha1') return ['rbg@v0.6.0', 'rbg@v0.7.0', 'rbg@v0.8.0-alpha.5'];
  if (apiVersion === 'workloads.x-k8s.io/v1alpha2') return ['rbg@v0.7.0', 'rbg@v0.8.0-alpha.5'];
  throw new Error(`no supported versions known for ${apiVersion}`);
}

const schemas = new Map<string, SchemaSet>();

beforeAll(async () => {
  for (const project of ['kuberay', 'gateway-api', 'rbg'] as const) {
    for (const version of SUPPORTED_VERSIONS[project]) schemas.set(`${project}@${version}`, await loadProjectSchemas(project, version));
  }
  for (const version of SUPPORTED_VERSIONS.kuberay) {
    schemas.set(`rayshift-from-kuberay@${version}`, compileCrds([rayshiftRayServiceCrd(await loadKubeRayRayServiceCrd(version))]));
  }
});

// Built-in kinds (a router's Deployment, Service and RBAC objects) have no CRD schema here: a real
// kube-apiserver checks them, with strict field validation, in test/integration/cluster-rbg-router.test.ts.
const BUILT_IN_API_VERSIONS = ['v1', 'apps/v1', 'rbac.authorization.k8s.io/v1'];
const manifests = sampleManifests().filter((m) => !BUILT_IN_API_VERSIONS.includes(String(m.apiVersion)));

test('the sample app covers every kind rayshift synthesizes', () => {
  const kinds = new Set(manifests.map((m) => `${m.apiVersion}/${m.kind}`));
  expect([...kinds].sort()).toEqual(
    [
      'gateway.networking.k8s.io/v1/GRPCRoute',
      'gateway.networking.k8s.io/v1/Gateway',
      'gateway.networking.k8s.io/v1/GatewayClass',
      'gateway.networking.k8s.io/v1/HTTPRoute',
      'ray.io/v1/RayService',
      'rayshift.dev/v1alpha1/RayService',
      'workloads.x-k8s.io/v1alpha1/RoleBasedGroup',
      'workloads.x-k8s.io/v1alpha2/CoordinatedPolicy',
      'workloads.x-k8s.io/v1alpha2/RoleBasedGroup',
      'workloads.x-k8s.io/v1alpha2/RoleBasedGroupWarmup',
    ].sort(),
  );
});

describe.each(manifests.map((m) => [`${m.kind}/${(m.metadata as Json).name}`, m] as const))('%s', (_label, manifest) => {
  test.each(targetsOf(manifest))('validates against %s', (target) => {
    const set = schemas.get(target);
    expect(set).toBeDefined();
    expect(schemaErrors(set!, manifest)).toEqual([]);
  });
});

describe('the schema check can fail', () => {
  const route = manifests.find((m) => m.kind === 'HTTPRoute')!;
  const service = manifests.find((m) => m.apiVersion === 'ray.io/v1')!;

  test('an HTTPRoute weight above 1,000,000 is rejected by every Gateway API version', () => {
    const bad = structuredClone(route) as Json;
    ((((bad.spec as Json).rules as Json[])[0].backendRefs as Json[])[0] as Json).weight = 1_000_001;
    for (const v of SUPPORTED_VERSIONS['gateway-api']) {
      expect(schemaErrors(schemas.get(`gateway-api@${v}`)!, bad).join('\n')).toMatch(/weight.*must be <= 1000000/);
    }
  });

  test('a misspelt upgrade option is rejected as an unknown field', () => {
    const bad = structuredClone(service) as Json;
    (bad.spec as Json).upgradeStrategy = { type: 'NewClusterWithIncrementalUpgrade', clusterUpgradeOption: {} };
    expect(schemaErrors(schemas.get('kuberay@v1.7.0')!, bad).join('\n')).toMatch(/clusterUpgradeOption/);
  });

  test('rule names exist from Gateway API v1.4.0 on: v1.2.1 rejects them, newer versions accept them', () => {
    const named = structuredClone(route) as Json;
    (((named.spec as Json).rules as Json[])[0] as Json).name = 'fruit';
    expect(schemaErrors(schemas.get('gateway-api@v1.2.1')!, named).join('\n')).toMatch(/additional properties \(name\)/);
    expect(schemaErrors(schemas.get('gateway-api@v1.4.0')!, named)).toEqual([]);
    expect(schemaErrors(schemas.get('gateway-api@v1.6.1')!, named)).toEqual([]);
  });

  test('RBG v0.8 fields: restartPolicyConfig is unknown to v0.7.0 and checked against its enum by v0.8.0-alpha.5', () => {
    const v08 = manifests.find((m) => (m.metadata as Json).name === 'pd-v08')!;
    expect(schemaErrors(schemas.get('rbg@v0.7.0')!, v08).join('\n')).toMatch(/additional properties \(restartPolicyConfig\)/);
    const bad = structuredClone(v08) as Json;
    ((((bad.spec as Json).roles as Json[])[0].leaderWorkerPattern as Json).restartPolicyConfig as Json).type = 'Always';
    expect(schemaErrors(schemas.get('rbg@v0.8.0-alpha.5')!, bad).join('\n')).toMatch(/restartPolicyConfig\/type: must be equal to one of the allowed values/);
  });

  test('the v0.8 v1alpha1 sample names RoleInstanceSet, which v0.6.0 and v0.7.0 accept too (a free-form workload)', () => {
    const legacy = manifests.find((m) => (m.metadata as Json).name === 'legacy-v08')!;
    expect(((legacy.spec as Json).roles as Json[]).map((r) => r.workload)).toEqual([
      { apiVersion: 'workloads.x-k8s.io/v1alpha2', kind: 'RoleInstanceSet' },
      { apiVersion: 'workloads.x-k8s.io/v1alpha2', kind: 'RoleInstanceSet' },
    ]);
    for (const v of ['v0.6.0', 'v0.7.0']) expect(schemaErrors(schemas.get(`rbg@${v}`)!, legacy)).toEqual([]);
  });

  test('RoleBasedGroupWarmup exists from RBG v0.8 on, and its schema checks the warmup\'s minimums', () => {
    const warmup = manifests.find((m) => m.kind === 'RoleBasedGroupWarmup' && (m.metadata as Json).name === 'gpu-nodes')!;
    expect(() => schemaErrors(schemas.get('rbg@v0.7.0')!, warmup)).toThrow(/no schema for workloads\.x-k8s\.io\/v1alpha2\/RoleBasedGroupWarmup/);
    const bad = structuredClone(warmup) as Json;
    ((bad.spec as Json).policies as Json).parallelism = 0;
    (((bad.spec as Json).targetNodes as Json).imagePreload as Json).pullSecret = 'x';
    const errors = schemaErrors(schemas.get('rbg@v0.8.0-alpha.5')!, bad).join('\n');
    expect(errors).toMatch(/policies\/parallelism: must be >= 1/);
    expect(errors).toMatch(/additional properties \(pullSecret\)/);
  });

  test('rayshift extensions are not part of ray.io/v1', () => {
    const bad = structuredClone(service) as Json;
    (bad.spec as Json).rayshift = { paused: true };
    expect(schemaErrors(schemas.get('kuberay@v1.7.0')!, bad).join('\n')).toMatch(/rayshift/);
  });
});
