/**
 * Serve config fields Serve would drop (lib/spec/serve-schema.ts; the lists are checked against the
 * real Ray by test/e2e/serve-schema.e2e.ts): a typo is an error naming the intended field, a field
 * of no close name a warning.
 */
import { stringify } from 'yaml';
import { validateRayService } from '../../lib/spec';
import { rayService } from './fixtures';

function withServeConfig(config: unknown) {
  const m = rayService();
  m.spec.serveConfigV2 = stringify(config);
  return validateRayService(m);
}

const app = (deployment: Record<string, unknown>) => ({ applications: [{ name: 'llm', import_path: 'llm.app:build', deployments: [{ name: 'LLM', ...deployment }] }] });

test('a misspelt GPU count in ray_actor_options is an error naming num_gpus: Serve would start every replica without a GPU', () => {
  const r = withServeConfig(app({ ray_actor_options: { num_gpu: 1 } }));
  expect(r.errors).toEqual([
    {
      path: 'spec.serveConfigV2.applications[0].deployments[0].ray_actor_options.num_gpu',
      message: `"num_gpu" is not a field of Serve's RayActorOptionsSchema (Ray 2.60.0), which ignores it; did you mean "num_gpus"?`,
      severity: 'error',
    },
  ]);
});

test('typos at every level: the config, an application, a deployment, its autoscaling config', () => {
  const r = withServeConfig({
    proxy_locaton: 'EveryNode',
    applications: [{ name: 'llm', import_path: 'llm.app:build', route_prefx: '/', deployments: [{ name: 'LLM', num_replica: 2, autoscaling_config: { max_replica: 4 } }] }],
  });
  expect(r.errors.map((e) => [e.path, /did you mean "(\w+)"/.exec(e.message)?.[1]])).toEqual([
    ['spec.serveConfigV2.proxy_locaton', 'proxy_location'],
    ['spec.serveConfigV2.applications[0].route_prefx', 'route_prefix'],
    ['spec.serveConfigV2.applications[0].deployments[0].num_replica', 'num_replicas'],
    ['spec.serveConfigV2.applications[0].deployments[0].autoscaling_config.max_replica', 'max_replicas'],
  ]);
});

test('a field far from every known one (another Ray release, say) is a warning listing the known fields', () => {
  const r = withServeConfig(app({ max_concurrent_queries: 10 }));
  expect(r.errors).toEqual([]);
  expect(r.warnings.map((w) => w.path)).toContain('spec.serveConfigV2.applications[0].deployments[0].max_concurrent_queries');
  expect(r.warnings.find((w) => w.path.endsWith('max_concurrent_queries'))!.message).toContain('known: autoscaling_config, backpressure_config');
});

test('free-form values are not checked: args, runtime_env, user_config, resources', () => {
  const r = withServeConfig({
    applications: [{ name: 'llm', import_path: 'llm.app:build', args: { anything: 1 }, runtime_env: { pip: ['x'] }, deployments: [{ name: 'LLM', user_config: { a: 1 }, ray_actor_options: { resources: { custom: 1 } } }] }],
  });
  expect([...r.errors, ...r.warnings].filter((p) => p.path.includes('serveConfigV2'))).toEqual([]);
});
