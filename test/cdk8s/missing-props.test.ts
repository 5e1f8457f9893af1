/**
 * Every required prop of every construct, left out, set to null or given a value of another type
 * (as a JavaScript or Python caller can: TypeScript's types do not hold them), fails synthesis with
 * a validation error at that prop, listed with every other problem, and never a TypeError. The
 * required props are read from the constructs' props types with the TypeScript compiler (as
 * scripts/pulumi-schema does for the Pulumi components), down through nested structs and lists; a
 * baseline below must set each of them, so a new required prop is covered or this test fails.
 */
import * as path from 'node:path';
import { Chart, Testing } from 'cdk8s';
import * as ts from 'typescript';
import * as constructs from '../../lib/cdk8s';
import { show } from '../../lib/spec';
import { synthError } from './helpers';

const ROOT = path.join(__dirname, '..', '..');

/** One required prop: its path in the props (`rules[0].backendRefs`) and what kind of value it takes. */
interface RequiredProp {
  readonly path: (string | number)[];
  readonly kind: 'list' | 'mapping' | 'string' | 'number' | 'boolean' | 'other';
}

/** Reads the required props of each construct's props type (the constructor's third parameter). */
function requiredProps(classes: readonly string[]): Map<string, RequiredProp[]> {
  const entry = path.join(ROOT, 'lib', 'cdk8s', 'index.ts');
  const config = ts.getParsedCommandLineOfConfigFile(path.join(ROOT, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined });
  const program = ts.createProgram([entry], { ...config?.options, noEmit: true });
  const checker = program.getTypeChecker();
  const exported = new Map(checker.getExportsOfModule(checker.getSymbolAtLocation(program.getSourceFile(entry)!)!).map((s) => [s.name, s]));
  const ours = (t: ts.Type) => (t.getSymbol()?.declarations ?? []).some((d) => d.getSourceFile().fileName.startsWith(path.join(ROOT, 'lib')));
  const members = (t: ts.Type) => (t.isUnion() ? t.types : [t]).filter((m) => (m.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Null)) === 0);
  // Constructs and other classes are passed by reference, not walked into.
  const isClass = (t: ts.Type) => (t.getSymbol()?.flags ?? 0) & ts.SymbolFlags.Class;
  const kindOf = (t: ts.Type): RequiredProp['kind'] => {
    const ms = members(t);
    if (ms.some((m) => checker.isArrayType(m))) return 'list';
    if (ms.every((m) => m.flags & (ts.TypeFlags.String | ts.TypeFlags.StringLiteral) || isClass(m))) return 'string';
    if (ms.every((m) => m.flags & (ts.TypeFlags.Number | ts.TypeFlags.NumberLiteral))) return 'number';
    if (ms.every((m) => m.flags & ts.TypeFlags.BooleanLike)) return 'boolean';
    if (ms.some((m) => m.flags & ts.TypeFlags.Object && !isClass(m))) return 'mapping';
    return 'other';
  };
  const walk = (t: ts.Type, at: (string | number)[], out: RequiredProp[], seen: Set<ts.Type>): void => {
    for (const m of members(t)) {
      if (seen.has(m) || isClass(m)) continue;
      if (checker.isArrayType(m)) {
        walk(checker.getTypeArguments(m as ts.TypeReference)[0], [...at, 0], out, seen);
        continue;
      }
      if (!(m.flags & ts.TypeFlags.Object) || !ours(m)) continue;
      for (const p of checker.getPropertiesOfType(m)) {
        const declaration = p.valueDeclaration ?? p.declarations?.[0];
        if (!declaration) continue;
        const type = checker.getTypeOfSymbolAtLocation(p, declaration);
        if ((p.flags & ts.SymbolFlags.Optional) === 0) out.push({ path: [...at, p.name], kind: kindOf(type) });
        walk(type, [...at, p.name], out, new Set([...seen, m]));
      }
    }
  };
  const table = new Map<string, RequiredProp[]>();
  for (const name of classes) {
    const found = exported.get(name)!;
    const symbol = found.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(found) : found;
    const declaration = symbol.valueDeclaration!;
    const ctor = checker.getSignaturesOfType(checker.getTypeOfSymbolAtLocation(symbol, declaration), ts.SignatureKind.Construct)[0];
    const props = ctor.getParameters().find((p) => p.name === 'props')!;
    const out: RequiredProp[] = [];
    walk(checker.getTypeOfSymbolAtLocation(props, declaration), [], out, new Set());
    table.set(name, out);
  }
  return table;
}

const template = (name: string) => ({ spec: { containers: [{ name, image: 'lmsysorg/sglang:v0.5.5' }] } });
const analysis = {
  prometheusUrl: 'http://prometheus:9090',
  metrics: [{ name: 'errors', query: 'sum(rate(errors[1m]))', successCondition: { maximum: 1 } }],
  holds: [{ weightPercent: 50, seconds: 60 }],
};
const roles = () => ['prefill', 'decode', 'router', 'cache'].map((name) => ({ name, replicas: 2, template: template(name) }));

/** Stands for the group construct in the CoordinatedPolicy's props (props are plain data here, cloned per case). */
const GROUP = 'the group construct';

/** A construct built in a fresh chart from plain props: every required prop (and the optional ones holding required ones) set. */
interface Baseline {
  readonly construct: string;
  readonly props: () => Record<string, unknown>;
  readonly build: (chart: Chart, props: any) => void;
}

const BASELINES: Baseline[] = [
  {
    construct: 'RayService',
    props: () => ({
      metadata: { name: 'llm' },
      executor: 'operator',
      rayClusterConfig: { enableInTreeAutoscaling: true, headGroupSpec: { template: template('ray-head') }, workerGroupSpecs: [{ groupName: 'cpu', minReplicas: 1, maxReplicas: 2, template: template('ray-worker') }] },
      serveConfig: { applications: [{ name: 'llm', importPath: 'app:app', deployments: [{ name: 'D', numReplicas: 1 }] }] },
      upgradeStrategy: { type: 'NewClusterWithIncrementalUpgrade', clusterUpgradeOptions: { stepSizePercent: 10, intervalSeconds: 30 } },
      rayshift: { gatewayRef: { name: 'shared' }, analysis },
    }),
    build: (chart, props) => new constructs.RayService(chart, 'llm', props),
  },
  {
    construct: 'RayClusterSpecBuilder',
    props: () => ({
      image: 'rayproject/ray:2.52.0',
      head: { resources: { cpu: '2', memory: '8Gi' } },
      workerGroups: [{ groupName: 'gpu', maxReplicas: 4, resources: { cpu: '8', memory: '64Gi', accelerators: 1 } }],
    }),
    build: (chart, props) => new constructs.RayService(chart, 'llm', { metadata: { name: 'llm' }, rayClusterConfig: new constructs.RayClusterSpecBuilder(props), serveConfig: 'applications:\n- import_path: app:app\n' }),
  },
  { construct: 'GatewayClass', props: () => ({ metadata: { name: 'traefik' }, controllerName: 'traefik.io/gateway-controller' }), build: (chart, props) => new constructs.GatewayClass(chart, 'class', props) },
  { construct: 'Gateway', props: () => ({ metadata: { name: 'gw' }, gatewayClass: 'traefik', listeners: [{ name: 'http', protocol: 'HTTP', port: 80 }] }), build: (chart, props) => new constructs.Gateway(chart, 'gw', props) },
  ...(['HttpRoute', 'GrpcRoute'] as const).map((construct) => ({
    construct,
    props: () => ({
      metadata: { name: 'route' },
      parents: [{ name: 'gw' }],
      rules: [
        {
          backendRefs: [{ name: 'llm-serve-svc', port: 8000 }],
          matches: construct === 'HttpRoute' ? [{ headers: [{ name: 'x-canary', value: 'yes' }], queryParams: [{ name: 'q', value: 'v' }] }] : [{ headers: [{ name: 'x-canary', value: 'yes' }] }],
        },
      ],
    }),
    build: (chart: Chart, props: any) => (construct === 'HttpRoute' ? new constructs.HttpRoute(chart, 'route', props) : new constructs.GrpcRoute(chart, 'route', props)),
  })),
  ...(['rbg', 'operator'] as const).map((executor) => ({
    construct: 'RoleBasedGroup',
    props: () => ({
      metadata: { name: 'pd' },
      executor,
      rbgVersion: 'v0.8',
      roles: roles(),
      // The router (operator only) is on the first rule: the table walks lists at index 0.
      coordination: [
        ...(executor === 'operator' ? [] : [{ name: 'together', roles: ['router', 'cache'], affinityScheduling: { ratios: { router: 1, cache: 1 } } }]),
        {
          name: 'pd',
          roles: ['prefill', 'decode'],
          rollingUpdate: { maxSkew: '50%' },
          ...(executor === 'operator' ? { router: { kind: 'sglang', image: 'lmsysorg/sglang:v0.5.5', gateway: { name: 'inference' } } } : {}),
        },
        ...(executor === 'operator' ? [{ name: 'together', roles: ['router', 'cache'], affinityScheduling: { ratios: { router: 1, cache: 1 } } }] : []),
      ],
      ...(executor === 'operator' ? { analysis: { ...analysis, onFailure: 'abort' } } : {}),
    }),
    build: (chart: Chart, props: any) => new constructs.RoleBasedGroup(chart, 'pd', props),
  })),
  {
    construct: 'RoleBasedGroupWarmup',
    props: () => ({ metadata: { name: 'warm' }, nodes: { names: ['node-1'], actions: { imagePreload: { images: ['sglang:v2'] }, customizedAction: { containers: [{ name: 'fetch', image: 'fetch:v1' }] } } } }),
    build: (chart, props) => new constructs.RoleBasedGroupWarmup(chart, 'warm', props),
  },
  {
    construct: 'RoleBasedGroupWarmup',
    props: () => ({ metadata: { name: 'warm' }, group: { group: 'pd', roles: { prefill: { imagePreload: { images: ['sglang:v2'] } } } } }),
    build: (chart, props) => new constructs.RoleBasedGroupWarmup(chart, 'warm', props),
  },
  {
    construct: 'CoordinatedPolicy',
    props: () => ({ group: GROUP, rules: [{ name: 'pd', roles: ['prefill', 'decode'], rollingUpdate: { maxSkew: '50%' } }] }),
    build: (chart, props) => {
      const group = new constructs.RoleBasedGroup(chart, 'pd', { metadata: { name: 'pd' }, roles: roles() });
      new constructs.CoordinatedPolicy(chart, 'policy', props && { ...props, ...(props.group === GROUP ? { group } : {}) });
    },
  },
];

/**
 * Props the constructs write under another name than the prop's, with the path the finding names:
 * the Gateway's class is `spec.gatewayClassName`, a warmup's actions are merged into its target.
 */
const WRITTEN_AS: Record<string, string> = {
  'Gateway gatewayClass': 'spec.gatewayClassName',
  'RoleBasedGroupWarmup nodes.actions': 'spec.targetNodes',
  'RoleBasedGroupWarmup group.group': 'spec.targetRoleBasedGroup.name',
};

/** Required props no case can reach, and why. */
const UNREACHABLE: Record<string, string> = {
  // A policy carries rolling-update and scaling rules only: the construct refuses the whole `affinityScheduling`.
  'CoordinatedPolicy rules[0].affinityScheduling.ratios': 'a CoordinatedPolicy takes no affinityScheduling',
  ...Object.fromEntries(['kind', 'image', 'gateway', 'gateway.name'].map((f) => [`CoordinatedPolicy rules[0].router.${f}`, 'a CoordinatedPolicy takes no router'])),
};

const TABLE = requiredProps([...new Set(BASELINES.map((b) => b.construct))]);

function get(value: any, at: readonly (string | number)[]): unknown {
  return at.reduce((v, k) => (v === undefined || v === null ? undefined : v[k]), value);
}

function withValue(props: Record<string, unknown>, at: readonly (string | number)[], value: unknown): Record<string, unknown> {
  const copy = structuredClone(props);
  const parent = get(copy, at.slice(0, -1)) as Record<string | number, unknown>;
  if (value === undefined) delete parent[at[at.length - 1]];
  else parent[at[at.length - 1]] = value;
  return copy;
}

const dotted = (at: readonly (string | number)[]) => at.map((k, i) => (typeof k === 'number' ? `[${k}]` : i === 0 ? k : `.${k}`)).join('');
/** Path components without indexes, Serve's snake_case folded to the props' camelCase. */
const components = (p: string) => p.split(/[.[\]]+/).filter((c) => c !== '' && !/^\d+$/.test(c)).map((c) => c.replace(/_/g, '').toLowerCase());

/** A value of another kind than the prop takes. */
function wrongKind(kind: RequiredProp['kind']): unknown {
  return kind === 'string' ? 7 : 'not-a-' + kind;
}

const cases = BASELINES.flatMap((b) =>
  TABLE.get(b.construct)!
    .filter((p) => get(b.props(), p.path) !== undefined)
    .flatMap((p) =>
      [undefined, null, wrongKind(p.kind)].map((value) => ({ name: `${b.construct} ${dotted(p.path)} = ${show(value)}`, baseline: b, prop: p, value })),
    ),
);

test('the table holds every construct, and the baselines set every required prop it lists', () => {
  expect([...TABLE.keys()].sort()).toEqual(['CoordinatedPolicy', 'Gateway', 'GatewayClass', 'GrpcRoute', 'HttpRoute', 'RayClusterSpecBuilder', 'RayService', 'RoleBasedGroup', 'RoleBasedGroupWarmup']);
  // Spot checks that the compiler walk reaches nested and listed structs, not only the top level.
  expect(TABLE.get('RoleBasedGroup')!.map((p) => dotted(p.path))).toEqual(expect.arrayContaining(['roles', 'roles[0].name', 'roles[0].template', 'coordination[0].roles', 'coordination[0].affinityScheduling.ratios']));
  expect(TABLE.get('RayClusterSpecBuilder')!.map((p) => dotted(p.path))).toEqual(expect.arrayContaining(['head', 'head.resources', 'head.resources.cpu', 'workerGroups[0].maxReplicas']));
  for (const [construct, props] of TABLE) {
    const baselines = BASELINES.filter((b) => b.construct === construct);
    const unset = props
      .filter((p) => baselines.every((b) => get(b.props(), p.path) === undefined))
      .map((p) => dotted(p.path))
      .filter((p) => UNREACHABLE[`${construct} ${p}`] === undefined);
    expect({ construct, unset }).toEqual({ construct, unset: [] });
  }
});

test('every baseline synthesizes: each failure below is the one prop alone', () => {
  for (const b of BASELINES) {
    const chart = new Chart(Testing.app(), 'test', { namespace: 'ns' });
    b.build(chart, b.props());
    expect(() => Testing.synth(chart)).not.toThrow();
  }
});

test.each(cases)('$name fails synthesis at that prop', ({ baseline, prop, value }) => {
  const chart = new Chart(Testing.app(), 'test', { namespace: 'ns' });
  let message = '';
  try {
    baseline.build(chart, withValue(baseline.props(), prop.path, value));
    Testing.synth(chart);
  } catch (err) {
    message = (err as Error).message;
  }
  expect(message).not.toContain('Cannot read properties');
  expect(message).not.toMatch(/is not (a function|iterable)/);
  expect(message).toMatch(/^Validation failed with the following errors/);
  // Each finding reads `[chart/id] Kind/name: PATH: message`; one of them is at the prop.
  const written = WRITTEN_AS[`${baseline.construct} ${dotted(prop.path).replace(/\[\d+\]/g, '')}`];
  const wanted = written ? components(written) : components(dotted(prop.path)).slice(-1);
  const paths = message
    .split('\n')
    .slice(1)
    .map((line) => /^\s*\[[^\]]*\] \S+: ([^:]*):/.exec(line)?.[1] ?? '')
    .map(components);
  expect({ message, at: paths.some((c) => wanted.every((w) => c.includes(w))) }).toEqual({ message, at: true });
});

/** Where the finding is when a construct gets no props at all and no single prop is what is missing. */
const NO_PROPS_AT: Record<string, string> = {
  // The RayService names the builder it was given as a whole.
  RayClusterSpecBuilder: 'rayClusterConfig',
  // No prop is required alone: exactly one of `nodes` and `group` is (RBG's CEL rule).
  RoleBasedGroupWarmup: 'spec',
};

const noProps = [...new Map(BASELINES.map((b) => [b.construct, b])).values()].flatMap((baseline) => [undefined, null].map((props) => ({ name: `${baseline.construct} given ${show(props)} props`, baseline, props })));

test.each(noProps)('$name (plain JavaScript) fails synthesis at a required prop, never a TypeError', ({ baseline, props }) => {
  const chart = new Chart(Testing.app(), 'test', { namespace: 'ns' });
  let message = '';
  try {
    baseline.build(chart, props);
    Testing.synth(chart);
  } catch (err) {
    message = (err as Error).message;
  }
  expect(message).toMatch(/^Validation failed with the following errors/);
  const required = TABLE.get(baseline.construct)!.filter((p) => p.path.length === 1).map((p) => dotted(p.path));
  const written = NO_PROPS_AT[baseline.construct] !== undefined ? [NO_PROPS_AT[baseline.construct]] : required.map((p) => WRITTEN_AS[`${baseline.construct} ${p}`] ?? p);
  expect(written.length).toBeGreaterThan(0);
  // Each finding reads `[chart/id] Kind/name: PATH: message`; one names a top-level required prop (or what it is written as).
  const paths = message.split('\n').slice(1).map((line) => /^\s*\[[^\]]*\] \S+: ([^:]*):/.exec(line)?.[1] ?? '');
  expect({ message, named: paths.some((at) => written.some((w) => components(at).join('.').endsWith(components(w).join('.')))) }).toEqual({ message, named: true });
});

test('a CoordinatedPolicy refuses the affinityScheduling its wire form has no field for, rather than dropping it', () => {
  const chart = new Chart(Testing.app(), 'test', { namespace: 'ns' });
  const group = new constructs.RoleBasedGroup(chart, 'pd', { metadata: { name: 'pd' }, roles: roles() });
  new constructs.CoordinatedPolicy(chart, 'policy', { group, rules: [{ name: 'pd', roles: ['prefill', 'decode'], rollingUpdate: { maxSkew: '50%' }, affinityScheduling: { ratios: { prefill: 1, decode: 1 } } }] });
  expect(synthError(chart)).toContain('CoordinatedPolicy/pd: rules[0].affinityScheduling: cannot be carried by a CoordinatedPolicy');
});

test.each([['"two"', 'two'], ['1.5', 1.5], ['-1', -1]])('RayClusterSpecBuilder accelerators %s fails at the prop (the spec would drop or disguise it)', (_label, accelerators) => {
  const chart = new Chart(Testing.app(), 'test', { namespace: 'ns' });
  const builder = new constructs.RayClusterSpecBuilder({ image: 'rayproject/ray:2.52.0', head: { resources: { cpu: '2', memory: '8Gi', accelerators: accelerators as number } } });
  new constructs.RayService(chart, 'llm', { metadata: { name: 'llm' }, rayClusterConfig: builder, serveConfig: 'applications:\n- import_path: app:app\n' });
  expect(synthError(chart)).toContain(`RayService/llm: rayClusterConfig.head.resources.accelerators: must be an integer ≥ 0 (accelerators per pod); got ${show(accelerators)}`);
});
