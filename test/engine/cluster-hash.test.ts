/** clusterSpecHash ignores the same fields as KubeRay's hash and nothing else. */
import { clusterSpecHash, newClusterName, type JsonValue } from '../../lib/engine';

const spec = (): { [k: string]: JsonValue } => ({
  rayVersion: '2.52.0',
  enableInTreeAutoscaling: true,
  headGroupSpec: {
    rayStartParams: { 'num-cpus': '0' },
    template: { spec: { containers: [{ name: 'ray-head', image: 'rayproject/ray:2.52.0' }] } },
  },
  workerGroupSpecs: [
    {
      groupName: 'small-group',
      replicas: 1,
      minReplicas: 1,
      maxReplicas: 2,
      rayStartParams: {},
      template: { spec: { containers: [{ name: 'ray-worker', image: 'rayproject/ray:2.52.0', resources: { requests: { cpu: '2' } } }] } },
    },
  ],
});

describe('clusterSpecHash', () => {
  const base = clusterSpecHash(spec());

  it('is a 32-character base32hex SHA-1', () => {
    expect(base).toMatch(/^[0-9A-V]{32}$/);
  });

  it('ignores suspend, upgradeStrategy, tolerations, schedulingGates, replica counts and workersToDelete', () => {
    const s = spec() as any;
    s.suspend = true;
    s.upgradeStrategy = { type: 'Recreate' };
    s.headGroupSpec.template.spec.tolerations = [{ key: 'gpu', operator: 'Exists' }];
    s.headGroupSpec.template.spec.schedulingGates = [{ name: 'kueue.x-k8s.io/admission' }];
    const w = s.workerGroupSpecs[0];
    w.replicas = 7;
    w.minReplicas = 0;
    w.maxReplicas = 9;
    w.scaleStrategy = { workersToDelete: ['pod-a'] };
    w.template.spec.tolerations = [{ key: 'gpu', operator: 'Exists' }];
    w.template.spec.schedulingGates = [{ name: 'gate' }];
    expect(clusterSpecHash(s)).toBe(base);
  });

  it('does not depend on key order, explicit nulls or being given JSON text', () => {
    const s = spec() as any;
    const reordered = { workerGroupSpecs: s.workerGroupSpecs, headGroupSpec: s.headGroupSpec, enableInTreeAutoscaling: true, rayVersion: '2.52.0', autoscalerOptions: null };
    expect(clusterSpecHash(reordered)).toBe(base);
    expect(clusterSpecHash(JSON.stringify(spec()))).toBe(base);
  });

  it('changes with anything else: the KubeRay e2e trigger (worker CPU), images, new groups, other scaleStrategy fields', () => {
    const cpu = spec() as any;
    cpu.workerGroupSpecs[0].template.spec.containers[0].resources.requests.cpu = '500m';
    const image = spec() as any;
    image.headGroupSpec.template.spec.containers[0].image = 'rayproject/ray:2.53.0';
    const group = spec() as any;
    group.workerGroupSpecs.push({ ...group.workerGroupSpecs[0], groupName: 'gpu' });
    const tolerationsElsewhere = spec() as any;
    tolerationsElsewhere.workerGroupSpecs[0].template.spec.containers[0].env = [{ name: 'tolerations', value: 'x' }];
    const hashes = [cpu, image, group, tolerationsElsewhere].map((s) => clusterSpecHash(s));
    expect(new Set([base, ...hashes]).size).toBe(5);
  });
});

describe('newClusterName', () => {
  it('is deterministic and skips names still in use', () => {
    const first = newClusterName('svc', 'HASH', new Set());
    expect(first).toMatch(/^svc-[0-9a-v]{5}$/);
    expect(newClusterName('svc', 'HASH', new Set())).toBe(first);
    const second = newClusterName('svc', 'HASH', new Set([first]));
    expect(second).not.toBe(first);
    expect(second).toMatch(/^svc-[0-9a-v]{5}$/);
  });
});
