/**
 * Generated manifests shaped like the real ones (RayService of `ray.io/v1` and `rayshift.dev/v1alpha1`,
 * the latter with its analysis now and then,
 * RoleBasedGroup with or without a CoordinatedPolicy), most fields near their valid ranges and their
 * edges, then broken by noise: any node of the tree replaced by a value of another type, removed, or
 * joined by an unknown key. The shape keeps the validators past their first checks, so the noise
 * reaches every level; the noise reaches what the shape never would.
 */
import fc from 'fast-check';
import { RBG_V1ALPHA1, RBG_V1ALPHA2 } from '../../../lib/spec';
import { ANALYSIS_FAILURE_ACTIONS } from '../../../lib/spec/analysis';
import { ANALYSIS_TEMPLATE_NAMES } from '../../../lib/spec/analysis-templates';
import { INT32_MAX } from '../../../lib/spec/read';
import { RBG_PLAN_MAX_ROUNDS } from '../../../lib/spec/rbg-rules';
import { dnsLabel, edgyInt, junk, maybe, mostly, pick } from './fuzz-values';

const rayVersion = pick(['2.52.0', '2.55.0', '2.55.1', '2.52.0rc1', 'v2.60'], ['2.9.3', '2.51.99', '3', '02.52', '2.x', '', '18446744073709551616.1']);

/** A pod template with `accelerators` NVIDIA GPUs per pod (resources as quantity strings, the way users write them). */
const podTemplate = fc
  .record({
    image: fc.constantFrom('rayproject/ray:2.52.0', 'rayproject/ray:2.52.0-gpu'),
    accelerators: fc.oneof({ arbitrary: fc.constant(0), weight: 4 }, { arbitrary: fc.integer({ min: 1, max: 8 }), weight: 4 }, { arbitrary: fc.constantFrom('1', '2 ', 'x'), weight: 1 }),
    containers: fc.oneof({ arbitrary: fc.integer({ min: 1, max: 2 }), weight: 40 }, { arbitrary: fc.constant(0), weight: 1 }),
  })
  .map(({ image, accelerators, containers }) => {
    const limits: Record<string, unknown> = { cpu: '4', memory: '16Gi' };
    if (accelerators !== 0) limits['nvidia.com/gpu'] = accelerators;
    return { spec: { containers: Array.from({ length: containers }, (_, i) => ({ name: `ray-${i}`, image, resources: { limits, requests: limits } })) } };
  });

/** A worker group whose replica bounds are consistent, usually. */
const replicaBounds = fc
  .tuple(edgyInt(0, 4), edgyInt(0, 12), fc.integer({ min: 0, max: 12 }), fc.nat({ max: 20 }))
  .map(([min, max, replicas, scramble]) => (scramble === 0 ? { minReplicas: min, maxReplicas: max, replicas } : { minReplicas: Math.min(min, max), maxReplicas: Math.max(min, max), replicas: Math.min(Math.max(replicas, Math.min(min, max)), Math.max(min, max)) }));

const workerGroup = fc
  .record({
    groupName: mostly(dnsLabel),
    bounds: replicaBounds,
    rayStartParams: maybe(fc.dictionary(fc.constantFrom('num-cpus', 'num-gpus', 'resources'), fc.constantFrom('0', '1', '"{}"'))),
    template: mostly(podTemplate),
  })
  .map(({ bounds, ...g }) => ({ ...g, ...bounds }));

const authOptions = fc.record(
  { mode: mostly(pick(['disabled', 'token'], ['Token'])), enableK8sTokenAuth: mostly(pick([false], [true])), secretName: mostly(pick(['ray-token'], [''])) },
  { requiredKeys: [] },
);

const rayClusterConfig = fc.record(
  {
    rayVersion: mostly(rayVersion),
    enableInTreeAutoscaling: mostly(pick([true], [false])),
    authOptions: mostly(authOptions),
    headGroupSpec: mostly(
      fc.record(
        {
          rayStartParams: fc.constant({ 'num-cpus': '0' }),
          template: mostly(podTemplate),
          headService: fc.oneof({ arbitrary: fc.constant(undefined), weight: 15 }, { arbitrary: fc.record({ metadata: fc.record({ name: mostly(dnsLabel) }, { requiredKeys: [] }) }), weight: 1 }),
        },
        { requiredKeys: ['template'] },
      ),
    ),
    workerGroupSpecs: mostly(fc.array(workerGroup, { maxLength: 3 })),
  },
  { requiredKeys: ['rayVersion', 'headGroupSpec', 'enableInTreeAutoscaling'] },
);

const importPath = pick(['app.main:app', 'ray.serve.llm:build_openai_app', 'pkg.mod.attr', 'ray-op.samples:Dag'], ['no path', 'a:b:c', ':x', 'mod:', '.rel:x', 'mod:1x']);

const serveApp = fc.record(
  {
    name: mostly(pick(['llm', 'chat', 'default'], [''])),
    import_path: mostly(importPath),
    route_prefix: mostly(pick(['/', '/a', '/b', null], ['nope'])),
    deployments: maybe(fc.array(fc.record({ name: mostly(pick(['Model'], [''])), num_replicas: mostly(fc.constantFrom(1, 4, 'auto')) }, { requiredKeys: ['name'] }), { maxLength: 2 })),
  },
  { requiredKeys: ['name', 'import_path'] },
);

/** Applications with distinct names and route prefixes, usually (Serve requires both unique). */
const serveApps = fc.tuple(fc.array(serveApp, { minLength: 1, maxLength: 3 }), fc.nat({ max: 15 })).map(([apps, scramble]) =>
  scramble === 0 || apps.length === 1
    ? apps
    : apps.map((a, i) => ({ ...a, name: typeof a.name === 'string' ? `${a.name}${i}` : a.name, route_prefix: typeof a.route_prefix === 'string' ? `${a.route_prefix}${i}` : a.route_prefix })),
);

/** `serveConfigV2`: YAML of generated applications (JSON is YAML), hand-written YAML, or text that is not a mapping. */
const serveConfigV2 = fc.oneof(
  {
    arbitrary: fc
      .record(
        {
          applications: fc.oneof({ arbitrary: serveApps, weight: 40 }, { arbitrary: fc.constant([]), weight: 1 }, { arbitrary: junk, weight: 1 }),
          target_capacity: fc.oneof({ arbitrary: fc.constant(undefined), weight: 15 }, { arbitrary: fc.integer({ min: 0, max: 100 }), weight: 1 }),
        },
        { requiredKeys: ['applications'] },
      )
      .map((c) => JSON.stringify(c)),
    weight: 30,
  },
  {
    arbitrary: fc.constantFrom(
      'applications:\n  - import_path: app.main:app\n',
      'applications: []\n',
      'applications: [\n',
      'just text',
      '',
      '- a\n- b\n',
      'a: &a [1]\nb: *a\n',
      'applications:\n  - import_path: app.main:app\n    route_prefix: /\n  - import_path: app.main:app\n    route_prefix: /\n',
      '\t:\n',
    ),
    weight: 2,
  },
  { arbitrary: fc.string({ maxLength: 40 }), weight: 1 },
);

const upgradeStrategy = fc.record(
  {
    type: mostly(pick(['NewCluster', 'NewClusterWithIncrementalUpgrade', 'NewClusterWithIncrementalUpgrade', 'None'], ['none'])),
    clusterUpgradeOptions: mostly(
      fc.record(
        {
          maxSurgePercent: mostly(edgyInt(1, 100)),
          stepSizePercent: mostly(edgyInt(1, 100)),
          stepWithinSurge: fc.nat({ max: 10 }),
          intervalSeconds: mostly(fc.oneof({ arbitrary: edgyInt(1, 120), weight: 40 }, { arbitrary: fc.constantFrom(INT32_MAX, INT32_MAX + 1), weight: 2 })),
          gatewayClassName: mostly(pick(['istio', 'gateway.example.com', 'simulated'], ['Bad_Class', '', 'a..b'])),
        },
        { requiredKeys: ['stepSizePercent', 'stepWithinSurge', 'intervalSeconds', 'gatewayClassName'] },
      ).map(({ stepWithinSurge, ...o }) => {
        // KubeRay wants step ≤ surge; keep it so mostly, so that most incremental specs are valid.
        const { maxSurgePercent: surge, stepSizePercent: step } = o;
        if (stepWithinSurge === 0 || typeof surge !== 'number' || typeof step !== 'number' || step <= surge) return o;
        return { ...o, stepSizePercent: Math.max(1, Math.min(surge, Math.ceil(step / 100 * surge))) };
      }),
    ),
  },
  { requiredKeys: [] },
);

/** One metric of an analysis: a template or a query (both or neither now and then), its condition and counts. */
const analysisMetric = fc
  .record(
    {
      name: mostly(dnsLabel),
      source: fc.oneof(
        { arbitrary: fc.record({ template: mostly(pick(ANALYSIS_TEMPLATE_NAMES, ['ray-serve', ''])) }), weight: 10 },
        { arbitrary: fc.record({ query: mostly(pick(['sum(rate(x{cluster="{{cluster}}"}[{{window}}]))', 'up'], ['', '{{nope}}'])) }), weight: 5 },
        { arbitrary: fc.constantFrom({}, { template: 'envoy-error-ratio', query: 'up' }), weight: 1 },
      ),
      quantile: mostly(pick([0.5, 0.99], [0, 1])),
      successCondition: mostly(
        fc.record({ maximum: mostly(fc.double({ min: -10, max: 10, noNaN: true })), minimum: mostly(fc.constantFrom(0, -1)), maxAboveActive: mostly(edgyInt(0, 500)), maxAboveActivePercent: mostly(edgyInt(0, 100)) }, { requiredKeys: [] }),
      ),
      intervalSeconds: mostly(edgyInt(1, 120)),
      windowSeconds: mostly(edgyInt(1, 120)),
      count: mostly(edgyInt(1, 10)),
      failureLimit: mostly(edgyInt(0, 3)),
      inconclusiveLimit: mostly(edgyInt(0, 3)),
      consecutiveSuccessLimit: mostly(edgyInt(0, 3)),
    },
    { requiredKeys: ['name', 'source', 'successCondition'] },
  )
  .map(({ source, ...m }) => ({ ...m, ...source }));

/** `spec.rayshift.analysis` (lib/spec/analysis.ts). */
const analysis = fc.record(
  {
    prometheusUrl: mostly(pick(['http://prometheus.monitoring:9090', 'https://prom'], ['ftp://prom', 'http://u:p@prom', ''])),
    metrics: mostly(fc.array(analysisMetric, { minLength: 1, maxLength: 3 })),
    beforeEachStep: mostly(fc.boolean()),
    background: mostly(fc.boolean()),
    holds: mostly(fc.array(fc.record({ weightPercent: mostly(edgyInt(1, 100)), seconds: mostly(edgyInt(1, 600)) }), { maxLength: 2 })),
    onFailure: mostly(pick(ANALYSIS_FAILURE_ACTIONS, ['Rollback'])),
    dryRun: mostly(fc.boolean()),
    queryTimeoutSeconds: mostly(edgyInt(1, 300)),
    clusterLabel: mostly(pick(['ray_io_cluster', 'cluster'], ['ray.io/cluster'])),
  },
  { requiredKeys: ['prometheusUrl', 'metrics'] },
);

const rayshiftExtensions = fc.record(
  {
    gatewayRef: maybe(fc.record({ name: mostly(pick(['shared', 'gw.example'], ['Bad'])), namespace: mostly(pick(['gateways'], ['X'])), sectionName: mostly(fc.constantFrom('http', 'grpc')) }, { requiredKeys: [] })),
    progressDeadlineSeconds: mostly(fc.oneof({ arbitrary: edgyInt(1, 900), weight: 40 }, { arbitrary: fc.constantFrom(INT32_MAX, INT32_MAX + 1), weight: 2 })),
    paused: mostly(fc.boolean()),
    routeKind: mostly(pick(['HTTP', 'GRPC'], ['TCP'])),
    analysis: mostly(analysis),
  },
  { requiredKeys: [] },
);

const annotations = fc.record(
  { 'ray.io/initializing-timeout': mostly(pick(['5m', '1h30m', '1.5h', '300', '1µs', ''], ['0', '0s', '-5m', '-1', '5 m', 'µs', '9223372036854775808ns'])) },
  { requiredKeys: [] },
);

/** A RayService manifest of either API group, before noise. */
export const shapedRayService: fc.Arbitrary<Record<string, unknown>> = fc
  .record(
    {
      apiVersion: fc.constantFrom('ray.io/v1', 'rayshift.dev/v1alpha1'),
      metadata: fc.record({ name: mostly(dnsLabel), namespace: mostly(fc.constantFrom('serving', 'team-a')), annotations: mostly(annotations) }, { requiredKeys: ['name'] }),
      spec: fc.record(
        {
          rayClusterConfig: mostly(rayClusterConfig),
          serveConfigV2: mostly(serveConfigV2),
          upgradeStrategy: mostly(upgradeStrategy),
          rayClusterDeletionDelaySeconds: mostly(fc.oneof({ arbitrary: edgyInt(0, 120), weight: 40 }, { arbitrary: fc.constantFrom(INT32_MAX, INT32_MAX + 1), weight: 2 })),
          excludeHeadPodFromServeSvc: mostly(fc.boolean()),
          rayshift: maybe(mostly(rayshiftExtensions)),
        },
        { requiredKeys: ['rayClusterConfig'] },
      ),
    },
    { requiredKeys: ['apiVersion', 'metadata', 'spec'] },
  )
  .chain((m) =>
    // rayshift extensions belong to the rayshift kind; on ray.io/v1 they are an error, so keep them there rarely.
    fc.nat({ max: 15 }).map((roll) => {
      const { rayshift, ...spec } = m.spec;
      const keep = rayshift !== undefined && (m.apiVersion === 'rayshift.dev/v1alpha1' || roll === 0);
      return { kind: 'RayService', ...m, spec: keep ? { ...spec, rayshift } : spec };
    }),
  );

const intOrPercent = fc.oneof(
  { arbitrary: edgyInt(0, 10), weight: 6 },
  { arbitrary: edgyInt(0, 100).map((n) => `${n}%`), weight: 6 },
  { arbitrary: fc.constantFrom('2.5%', '05%', 'abc', '%', '101%'), weight: 1 },
);

const rollingUpdate = fc.record(
  { maxUnavailable: mostly(intOrPercent), maxSurge: mostly(intOrPercent), partition: mostly(intOrPercent), paused: mostly(fc.boolean()) },
  { requiredKeys: [] },
);

const ROLE_NAMES = ['router', 'prefill', 'decode'];

const role = fc.record(
  {
    name: mostly(fc.oneof(fc.constantFrom(...ROLE_NAMES), dnsLabel)),
    // Mostly small; any int32 count now and then, the edges of the plan's round limit (maxSkew 0% moves
    // one replica a round, so it is refused over more than RBG_PLAN_MAX_ROUNDS rolled replicas) and
    // the first count past int32.
    replicas: mostly(
      fc.oneof(
        { arbitrary: edgyInt(0, 12), weight: 20 },
        { arbitrary: fc.integer({ min: 0, max: INT32_MAX }), weight: 1 },
        { arbitrary: fc.constantFrom(RBG_PLAN_MAX_ROUNDS / 2, RBG_PLAN_MAX_ROUNDS / 2 + 1, INT32_MAX, INT32_MAX + 1), weight: 1 },
      ),
    ),
    rolloutStrategy: maybe(fc.record({ rollingUpdate: mostly(rollingUpdate) }, { requiredKeys: [] })),
    standalonePattern: fc.constant({ template: { spec: { containers: [{ name: 'c', image: 'i' }] } } }),
  },
  { requiredKeys: ['name'] },
);

/** A wire coordination rule (v1alpha1 `spec.coordination[]` or CoordinatedPolicy `spec.policies[]`). */
const wireRule = fc.record(
  {
    name: mostly(pick(['pd', 'all'], [''])),
    roles: mostly(fc.array(mostly(pick(ROLE_NAMES, ['ghost'])), { maxLength: 3 })),
    strategy: mostly(
      fc.record(
        {
          rollingUpdate: mostly(fc.record({ maxSkew: mostly(intOrPercent), maxUnavailable: mostly(intOrPercent), partition: mostly(intOrPercent) }, { requiredKeys: [] })),
          scaling: maybe(fc.record({ maxSkew: mostly(intOrPercent), progression: mostly(pick(['OrderScheduled', 'OrderReady'], ['Nope'])) }, { requiredKeys: [] })),
          affinityScheduling: maybe(
            fc.record(
              {
                ratios: mostly(fc.dictionary(fc.constantFrom(...ROLE_NAMES), mostly(edgyInt(1, 4)), { maxKeys: 3 })),
                batchMode: mostly(pick(['Sequential', 'Parallel'], ['Both'])),
                topologyKey: mostly(pick(['kubernetes.io/hostname', 'zone'], ['bad key', '/x'])),
              },
              { requiredKeys: [] },
            ),
          ),
        },
        { requiredKeys: [] },
      ),
    ),
  },
  { requiredKeys: [] },
);

/** A coordinated rolling update in percents (which every API version accepts), mostly in range. */
const percent = (min: number, max: number) => edgyInt(min, max).map((n) => `${n}%`);
const coordinatedRollout = fc.record(
  { maxSkew: mostly(percent(0, 100)), maxUnavailable: mostly(fc.oneof(percent(1, 100), edgyInt(1, 4))), partition: maybe(mostly(percent(0, 60))) },
  { requiredKeys: ['maxSkew'] },
);

/** A RoleBasedGroup (v1alpha1 with inline coordination, or v1alpha2) and, sometimes, its CoordinatedPolicy, before noise. */
export const shapedRbg: fc.Arbitrary<{ group: Record<string, unknown>; policy?: Record<string, unknown> }> = fc
  .record({
    apiVersion: fc.constantFrom(RBG_V1ALPHA1, RBG_V1ALPHA2),
    name: mostly(dnsLabel),
    roleCount: fc.oneof({ arbitrary: fc.integer({ min: 2, max: 3 }), weight: 15 }, { arbitrary: fc.integer({ min: 0, max: 1 }), weight: 1 }),
    roles: fc.array(role, { minLength: 3, maxLength: 3 }),
    distinctNames: fc.nat({ max: 15 }),
    ownRollout: fc.nat({ max: 15 }),
    oneRule: fc.oneof({ arbitrary: fc.constant(true), weight: 4 }, { arbitrary: fc.constant(false), weight: 1 }),
    coordinatedRollout,
    rules: fc.array(wireRule, { maxLength: 3 }),
    withPolicy: fc.boolean(),
    policyName: pick(['same'], ['other']),
  })
  .map((d) => {
    // Distinct role names without their own rollout settings and one rule over every role, mostly:
    // what a valid coordinated group looks like, so that most of them reach the plan.
    const roles = d.roles.slice(0, d.roleCount).map((r, i) => {
      const named = d.distinctNames === 0 ? r : { ...r, name: ROLE_NAMES[i] };
      if (d.ownRollout === 0) return named;
      const { rolloutStrategy: _own, ...rest } = named;
      return rest;
    });
    const rules = d.oneRule ? [{ name: 'pd', roles: roles.map((r) => r.name), strategy: { rollingUpdate: d.coordinatedRollout } }] : d.rules;
    const inline = d.apiVersion === RBG_V1ALPHA1 && !d.withPolicy;
    const group = { apiVersion: d.apiVersion, kind: 'RoleBasedGroup', metadata: { name: d.name }, spec: { roles, ...(inline ? { coordination: rules } : {}) } };
    if (!d.withPolicy) return { group };
    const policy = { apiVersion: RBG_V1ALPHA2, kind: 'CoordinatedPolicy', metadata: { name: d.policyName === 'same' ? d.name : 'other' }, spec: { policies: rules } };
    return { group, policy };
  });

/** One change noise makes at a node chosen by `at` (an index into the tree's nodes, modulo their count). */
interface Noise {
  readonly at: number;
  readonly op: 'replace' | 'delete' | 'add';
  readonly key: string;
  readonly value: unknown;
}

const noise: fc.Arbitrary<Noise> = fc.record({
  at: fc.nat(),
  op: fc.constantFrom('replace' as const, 'delete' as const, 'add' as const),
  key: fc.constantFrom('extra', '__proto__', 'constructor', 'spec', 'name', '0'),
  value: junk,
});

type Container = Record<string, unknown> | unknown[];

/** Every (container, key) pair of a JSON tree, depth first. */
function slots(root: Container): [Container, string | number][] {
  const out: [Container, string | number][] = [];
  const walk = (node: Container) => {
    for (const key of Array.isArray(node) ? node.keys() : Object.keys(node)) {
      out.push([node, key]);
      const child = (node as Record<string | number, unknown>)[key];
      if (child !== null && typeof child === 'object') walk(child as Container);
    }
  };
  walk(root);
  return out;
}

/** Applies `changes` to a deep copy of `value` (JSON plus `undefined`, NaN and ±Infinity, which the copy keeps). */
function applyNoise<T>(value: T, changes: readonly Noise[]): T {
  const copy = structuredClone(value) as unknown as Container;
  for (const n of changes) {
    const all = slots(copy);
    if (all.length === 0) break;
    const [node, key] = all[n.at % all.length];
    const target = node as Record<string | number, unknown>;
    // A copy of the value each time: fast-check reuses generated values while shrinking, and a value
    // inserted twice could end up inside itself.
    const value = structuredClone(n.value);
    if (n.op === 'replace') target[key] = value;
    else if (n.op === 'delete') Array.isArray(node) ? node.splice(key as number, 1) : delete target[key];
    else {
      const child = target[key];
      // defineProperty: `__proto__` becomes an own key, as JSON.parse makes it, not a prototype change.
      if (child !== null && typeof child === 'object' && !Array.isArray(child)) Object.defineProperty(child, n.key, { value, enumerable: true, writable: true, configurable: true });
    }
  }
  return copy as unknown as T;
}

/** `shaped` with up to `max` noise changes (none about a third of the time, so valid inputs stay common). */
export function withNoise<T>(shaped: fc.Arbitrary<T>, max = 4): fc.Arbitrary<T> {
  return fc.tuple(shaped, fc.oneof(fc.constant([] as Noise[]), fc.array(noise, { minLength: 1, maxLength: max }))).map(([v, changes]) => applyNoise(v, changes));
}

/** Any RayService input: shaped with noise, mostly; sometimes any value at all. */
export const anyRayService: fc.Arbitrary<unknown> = fc.oneof({ arbitrary: withNoise(shapedRayService), weight: 19 }, { arbitrary: fc.anything(), weight: 1 });

/** Any RoleBasedGroup input with its policy (when any): shaped with noise, mostly. */
export const anyRbg: fc.Arbitrary<{ group: unknown; policy?: unknown }> = fc.oneof(
  { arbitrary: withNoise(shapedRbg) as fc.Arbitrary<{ group: unknown; policy?: unknown }>, weight: 19 },
  { arbitrary: fc.record({ group: fc.anything(), policy: fc.oneof(fc.constant(undefined), fc.anything()) }), weight: 1 },
);
