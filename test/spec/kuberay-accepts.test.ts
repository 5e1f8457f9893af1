/**
 * Manifests KubeRay v1.7.0 accepts and runs, which rayshift must accept too (issue 19, item 2).
 */
import { RAYSHIFT_CEL_RULES } from '../../lib/crds/rayshift-crd';
import { generatedRayshiftRayServiceCrd } from '../../lib/crds/generated-crd';
import { NO_SERVE_CONFIG, validateRayService } from '../../lib/spec';
import { podTemplate, rayService, rayshiftService } from './fixtures';

/**
 * The shape of KubeRay v1.7.0's `config/samples/ray-service.no-ray-serve-replica.yaml`: its Serve
 * application is imported from a `working_dir` archive of the KubeRay repository, through
 * directories whose names hold hyphens.
 */
function kubeRaySample(importPath: string): any {
  return {
    apiVersion: 'ray.io/v1',
    kind: 'RayService',
    metadata: { name: 'rayservice-no-ray-serve-replica' },
    spec: {
      serveConfigV2: [
        'applications:',
        '  - name: simple_app',
        `    import_path: ${importPath}`,
        '    route_prefix: /basic',
        '    runtime_env:',
        '      working_dir: "https://github.com/ray-project/kuberay/archive/master.zip"',
        '    deployments:',
        '      - name: BaseService',
        '        num_replicas: 1',
        '',
      ].join('\n'),
      rayClusterConfig: {
        rayVersion: '2.52.0',
        headGroupSpec: { rayStartParams: { 'num-cpus': '0' }, template: podTemplate(0) },
        workerGroupSpecs: [{ groupName: 'small-group', replicas: 2, minReplicas: 1, maxReplicas: 5, template: podTemplate(0) }],
      },
    },
  };
}

describe('manifests KubeRay runs', () => {
  test('a Serve import_path through hyphenated directories (KubeRay v1.7.0 sample) is accepted', () => {
    const r = validateRayService(kubeRaySample('ray-operator.config.samples.ray-serve.single_deployment_dag:DagNode'));
    expect(r.errors).toEqual([]);
  });

  test('the same sample with an import_path that can never import is rejected, naming field and value', () => {
    const r = validateRayService(kubeRaySample('ray-operator.config.samples.ray-serve.:DagNode'));
    expect(r.errors.map((e) => e.path)).toEqual(['spec.serveConfigV2.applications[0].import_path']);
    expect(r.errors[0].message).toContain('"ray-operator.config.samples.ray-serve.:DagNode"');
  });
});

describe('a RayService without serveConfigV2 (KubeRay: TestValidateRayServiceSpec "The RayService spec is valid.")', () => {
  test.each([
    ['ray.io/v1', rayService],
    ['rayshift.dev/v1alpha1', rayshiftService],
  ])('%s: accepted, with one warning saying it never serves', (_, make) => {
    const m = make();
    delete m.spec.serveConfigV2;
    const r = validateRayService(m);
    expect(r.errors).toEqual([]);
    expect(r.warnings).toEqual([{ path: 'spec.serveConfigV2', message: NO_SERVE_CONFIG, severity: 'warning' }]);
    expect(NO_SERVE_CONFIG).toContain('never becomes Ready');
  });

  test('the rayshift CRD has no rule requiring it, in the builder or the committed file', () => {
    const rules = Object.values(RAYSHIFT_CEL_RULES).flat();
    expect(rules.filter((r) => r.rule.includes('serveConfigV2') || r.message.includes('serveConfigV2'))).toEqual([]);
    const crd = generatedRayshiftRayServiceCrd() as any;
    expect(JSON.stringify(crd)).not.toContain('has(self.serveConfigV2)');
    const spec = crd.spec.versions[0].schema.openAPIV3Schema.properties.spec;
    expect(spec.required ?? []).not.toContain('serveConfigV2');
    expect(spec.properties.serveConfigV2).toEqual({ type: 'string' });
  });
});
