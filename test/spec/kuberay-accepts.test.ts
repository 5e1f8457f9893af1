/**
 * Manifests KubeRay v1.7.0 accepts and runs, which rayshift must accept too (issue 19, item 2).
 */
import { validateRayService } from '../../lib/spec';
import { podTemplate } from './fixtures';

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
