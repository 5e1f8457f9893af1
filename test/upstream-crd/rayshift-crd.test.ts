/**
 * The rayshift CRD built from each supported KubeRay release's RayService CRD: KubeRay's spec schema
 * kept (two documented changes), `spec.rayshift`, CEL rules where the model's rules are, upstream's
 * conditions in the status. Needs the upstream CRDs; the rest is test/crd/rayshift-crd.test.ts.
 */
import { SUPPORTED_VERSIONS } from '../../lib/crds/catalog';
import { RAYSHIFT_CEL_RULES, RAYSHIFT_EXTENSIONS_SCHEMA, rayshiftRayServiceCrd } from '../../lib/crds/rayshift-crd';
import { loadKubeRayRayServiceCrd } from '../../lib/crds/regenerate';
import { compileCrds, schemaErrors } from '../support/crd-schema';
import { rayshiftService } from '../spec/fixtures';

const upstream = new Map<string, any>();

beforeAll(async () => {
  for (const v of SUPPORTED_VERSIONS.kuberay) upstream.set(v, await loadKubeRayRayServiceCrd(v));
});

function v1Spec(crd: any): any {
  return crd.spec.versions.find((v: any) => v.name === 'v1').schema.openAPIV3Schema.properties.spec;
}

/** Removes every x-kubernetes-validations this module added (keeps upstream's), for comparing with upstream. */
function withoutRayshift(schema: any): any {
  const s = structuredClone(schema);
  const ours = new Set(Object.values(RAYSHIFT_CEL_RULES).flat().map((r) => r.rule));
  const walk = (n: any) => {
    if (Array.isArray(n)) return n.forEach(walk);
    if (n === null || typeof n !== 'object') return;
    if (Array.isArray(n['x-kubernetes-validations'])) {
      n['x-kubernetes-validations'] = n['x-kubernetes-validations'].filter((r: any) => !ours.has(r.rule));
      if (n['x-kubernetes-validations'].length === 0) delete n['x-kubernetes-validations'];
    }
    Object.values(n).forEach(walk);
  };
  walk(s);
  return s;
}

describe.each(SUPPORTED_VERSIONS.kuberay)('built from KubeRay %s', (version) => {
  test('the ray.io/v1 spec schema is kept, except gatewayClassName: optional (gatewayRef may replace it) and ≤ 253 characters', () => {
    const crd: any = rayshiftRayServiceCrd(upstream.get(version));
    const root = crd.spec.versions[0].schema.openAPIV3Schema;
    const ours = withoutRayshift(root.properties.spec);
    const { rayshift, ...kept } = ours.properties;
    expect(rayshift).toEqual(RAYSHIFT_EXTENSIONS_SCHEMA);
    const expected = structuredClone(v1Spec(upstream.get(version)));
    const options = expected.properties.upgradeStrategy.properties.clusterUpgradeOptions;
    options.required = options.required.filter((f: string) => f !== 'gatewayClassName');
    options.properties.gatewayClassName.maxLength = 253;
    expect({ ...ours, properties: kept }).toEqual(expected);
  });

  test('CEL rules sit on the nodes RAYSHIFT_CEL_RULES names, after any upstream rule', () => {
    const root: any = (rayshiftRayServiceCrd(upstream.get(version)) as any).spec.versions[0].schema.openAPIV3Schema;
    for (const [path, rules] of Object.entries(RAYSHIFT_CEL_RULES)) {
      let node = root;
      for (const part of path ? path.split('.') : []) {
        node = part.endsWith('[*]') ? node.properties[part.slice(0, -3)].items : node.properties[part];
      }
      expect(node['x-kubernetes-validations'].slice(-rules.length)).toEqual(rules);
    }
  });

  test('a valid rayshift RayService validates against the schema (ajv, unknown fields rejected)', () => {
    const set = compileCrds([rayshiftRayServiceCrd(upstream.get(version))]);
    expect(schemaErrors(set, rayshiftService())).toEqual([]);
  });
});

test('conditions and applicationStatuses come from the upstream CRD when it has them', () => {
  const crd: any = rayshiftRayServiceCrd(upstream.get('v1.7.0'));
  const status = crd.spec.versions[0].schema.openAPIV3Schema.properties.status;
  const up = upstream.get('v1.7.0').spec.versions.find((v: any) => v.name === 'v1').schema.openAPIV3Schema.properties.status;
  expect(status.properties.conditions).toEqual(up.properties.conditions);
  expect(status.properties.pendingServiceStatus.properties.applicationStatuses).toEqual(up.properties.activeServiceStatus.properties.applicationStatuses);
});
