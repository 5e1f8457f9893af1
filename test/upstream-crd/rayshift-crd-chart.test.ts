/**
 * The operator's install chart with the rayshift CRD built from another KubeRay release than the
 * generated one (the `kubeRayRayServiceCrd` prop): needs that release's upstream CRD. The rest of
 * the chart is test/crd/rayshift-crd-chart.test.ts.
 */
import { Testing } from 'cdk8s';
import { SUPPORTED_VERSIONS } from '../../lib/crds/catalog';
import { generatedRayshiftRayServiceCrd } from '../../lib/crds/generated-crd';
import { rayshiftRayServiceCrd } from '../../lib/crds/rayshift-crd';
import { loadKubeRayRayServiceCrd } from '../../lib/crds/regenerate';
import { OperatorChart, validateRayshiftCrd } from '../../operator/chart/operator-chart';

/** The oldest supported KubeRay: the generated CRD is built from the newest, so this one differs. */
const OLDEST = SUPPORTED_VERSIONS.kuberay[0];
let oldest: unknown;

beforeAll(async () => {
  oldest = await loadKubeRayRayServiceCrd(OLDEST);
});

test('kubeRayRayServiceCrd builds the CRD from another KubeRay release instead', () => {
  const crds = Testing.synth(new OperatorChart(Testing.app(), 'op', { kubeRayRayServiceCrd: oldest })).filter((o) => o.kind === 'CustomResourceDefinition');
  expect(crds).toHaveLength(1);
  const [crd] = crds;
  expect(crd).toEqual(JSON.parse(JSON.stringify(rayshiftRayServiceCrd(oldest))));
  expect(crd).not.toEqual(generatedRayshiftRayServiceCrd());
  expect(validateRayshiftCrd(crd).errors).toEqual([]);
});
