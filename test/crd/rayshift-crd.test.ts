/**
 * The rayshift CRD builder with no upstream CRD at hand: CEL rules, a structural status, printer
 * columns (of the committed CRD). What it keeps of each supported KubeRay release's schema is
 * test/upstream-crd/rayshift-crd.test.ts; the real API server's verdict (installs, cost budget,
 * every rule's 422) is test/integration/rayshift-crd.test.ts.
 */
import { generatedRayshiftRayServiceCrd } from '../../lib/crds/generated-crd';
import { RAYSHIFT_CEL_RULES, RAYSHIFT_EXTENSIONS_SCHEMA, rayshiftRayServiceCrd } from '../../lib/crds/rayshift-crd';
import { rayshiftStatusSchema } from '../../lib/crds/rayshift-status-schema';

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
      ['activeServiceStatus', 'capacity', 'conditions', 'engineState', 'lastUpdateTime', 'message', 'nextStepAt', 'numServeEndpoints', 'observedGeneration', 'owner', 'pendingServiceStatus', 'phase', 'reason', 'servingSpec', 'surgeUnschedulable'].sort(),
    );
    expect(Object.keys(status.properties.activeServiceStatus.properties)).toEqual(['rayClusterName', 'targetCapacity', 'trafficRoutedPercent', 'lastTrafficMigratedTime', 'readyReplicas', 'targetReplicas']);
  });

  test('printer columns, the status subresource and names', () => {
    const crd: any = generatedRayshiftRayServiceCrd();
    expect(crd.metadata.name).toBe('rayservices.rayshift.dev');
    expect(crd.spec.names).toMatchObject({ kind: 'RayService', plural: 'rayservices', shortNames: ['rsrs'] });
    const v = crd.spec.versions[0];
    expect(v).toMatchObject({ name: 'v1alpha1', served: true, storage: true, subresources: { status: {} } });
    expect(v.additionalPrinterColumns.map((c: any) => c.name)).toEqual(['Phase', 'Active', 'Pending', 'Active Weight', 'Pending Weight', 'Active Capacity', 'Pending Capacity', 'Owner', 'Age']);
  });

  test('an upstream CRD without v1 is refused', () => {
    expect(() => rayshiftRayServiceCrd({ spec: { versions: [{ name: 'v1alpha1' }] } })).toThrow('the KubeRay RayService CRD has no v1 version');
  });
});
