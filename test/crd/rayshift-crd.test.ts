/**
 * The rayshift CRD builder: KubeRay's spec schema kept (two documented changes), `spec.rayshift`,
 * CEL rules where the model's rules are, a structural status, printer columns. The real API
 * server's verdict (installs, cost budget, every rule's 422) is in test/integration/rayshift-crd.test.ts.
 */
import { SUPPORTED_VERSIONS } from '../../lib/crds/catalog';
import { RAYSHIFT_CEL_RULES, RAYSHIFT_EXTENSIONS_SCHEMA, rayshiftRayServiceCrd, rayshiftStatusSchema } from '../../lib/crds/rayshift-crd';
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

describe('CEL rules', () => {
  const all = Object.entries(RAYSHIFT_CEL_RULES).flatMap(([path, rules]) => rules.map((r) => ({ path, ...r })));

  test('each message names its field (a spec.* or metadata.* path) and, for ranges, the allowed range', () => {
    for (const r of all) {
      expect(r.message).toMatch(/^(spec|metadata)\.[A-Za-z0-9.[\]*]+ /);
      if (/>=|<=/.test(r.rule) && !r.rule.includes('maxSurgePercent') && !r.rule.includes('size(')) expect(r.message).toMatch(/from \d+ to \d+|≥ (0|minReplicas)/);
    }
    expect(all.length).toBeGreaterThanOrEqual(20);
  });

  test('no rule iterates a list of the object (its cost would scale with the list\'s unbounded length)', () => {
    for (const r of all) expect(r.rule).not.toMatch(/self(\.\w+)*\.(all|exists|exists_one|map|filter)\(/);
  });

  test('no OpenAPI enum on rayshift fields: an enum violation would stop the CEL rules from running', () => {
    expect(JSON.stringify(RAYSHIFT_EXTENSIONS_SCHEMA)).not.toContain('"enum"');
  });
});

describe('status schema', () => {
  test('structural: every level typed, no preserve-unknown-fields except the opaque engine state and the recorded cluster config', () => {
    const status: any = rayshiftStatusSchema();
    const walk = (n: any, at: string) => {
      expect(n.type).toBeDefined();
      // The recorded rayClusterConfig is a verbatim copy of the (already defaulted) spec: pruning or defaulting it would change its hash.
      if (n['x-kubernetes-preserve-unknown-fields']) expect(['status.engineState', 'status.servingSpec.rayClusterConfig']).toContain(at);
      for (const [k, v] of Object.entries(n.properties ?? {})) walk(v, `${at}.${k}`);
      if (n.items) walk(n.items, `${at}[]`);
    };
    walk(status, 'status');
    expect(Object.keys(status.properties).sort()).toEqual(
      ['activeServiceStatus', 'conditions', 'engineState', 'lastUpdateTime', 'message', 'nextStepAt', 'numServeEndpoints', 'observedGeneration', 'pendingServiceStatus', 'phase', 'reason', 'servingSpec'].sort(),
    );
    expect(Object.keys(status.properties.activeServiceStatus.properties)).toEqual(['rayClusterName', 'targetCapacity', 'trafficRoutedPercent', 'lastTrafficMigratedTime', 'readyReplicas', 'targetReplicas']);
  });

  test('conditions and applicationStatuses come from the upstream CRD when it has them', () => {
    const crd: any = rayshiftRayServiceCrd(upstream.get('v1.7.0'));
    const status = crd.spec.versions[0].schema.openAPIV3Schema.properties.status;
    const up = upstream.get('v1.7.0').spec.versions.find((v: any) => v.name === 'v1').schema.openAPIV3Schema.properties.status;
    expect(status.properties.conditions).toEqual(up.properties.conditions);
    expect(status.properties.pendingServiceStatus.properties.applicationStatuses).toEqual(up.properties.activeServiceStatus.properties.applicationStatuses);
  });

  test('printer columns, the status subresource and names', () => {
    const crd: any = rayshiftRayServiceCrd(upstream.get('v1.7.0'));
    expect(crd.metadata.name).toBe('rayservices.rayshift.dev');
    expect(crd.spec.names).toMatchObject({ kind: 'RayService', plural: 'rayservices', shortNames: ['rsrs'] });
    const v = crd.spec.versions[0];
    expect(v).toMatchObject({ name: 'v1alpha1', served: true, storage: true, subresources: { status: {} } });
    expect(v.additionalPrinterColumns.map((c: any) => c.name)).toEqual(['Phase', 'Active', 'Pending', 'Active Weight', 'Pending Weight', 'Active Capacity', 'Pending Capacity', 'Age']);
  });

  test('an upstream CRD without v1 is refused', () => {
    expect(() => rayshiftRayServiceCrd({ spec: { versions: [{ name: 'v1alpha1' }] } })).toThrow('the KubeRay RayService CRD has no v1 version');
  });
});
