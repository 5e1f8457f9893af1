import { parse } from 'yaml';
import { ServeConfig, parseServeConfig, serializeServeConfig, toWireServeConfig, typedServeConfigProblems, validateServeConfig } from '../../lib/spec';
import { errorPaths, expectClean, expectOnlyError } from './fixtures';

const TYPED: ServeConfig = {
  proxyLocation: 'EveryNode',
  httpOptions: { port: 8000 },
  grpcOptions: { port: 9000, grpcServicerFunctions: ['embedder_pb2_grpc.add_EmbedderServicer_to_server'] },
  applications: [
    { name: 'chat', importPath: 'ray.serve.llm:build_openai_app', routePrefix: '/', args: { model_id: 'qwen' } },
    {
      name: 'embed',
      importPath: 'embedder.app:app',
      httpDisabled: true,
      deployments: [{ name: 'Embedder', numReplicas: 'auto', maxOngoingRequests: 8, rayActorOptions: { num_gpus: 1 }, graceful_shutdown_timeout_s: 5 }],
    },
  ],
};

/** TYPED in Ray's own names: what serveConfigV2 carries. */
const WIRE = {
  proxy_location: 'EveryNode',
  http_options: { port: 8000 },
  grpc_options: { port: 9000, grpc_servicer_functions: ['embedder_pb2_grpc.add_EmbedderServicer_to_server'] },
  applications: [
    { name: 'chat', route_prefix: '/', import_path: 'ray.serve.llm:build_openai_app', args: { model_id: 'qwen' } },
    {
      name: 'embed',
      route_prefix: null,
      import_path: 'embedder.app:app',
      deployments: [{ name: 'Embedder', num_replicas: 'auto', max_ongoing_requests: 8, ray_actor_options: { num_gpus: 1 }, graceful_shutdown_timeout_s: 5 }],
    },
  ],
};

describe('validateServeConfig: baselines', () => {
  test('a typed config with two applications is valid', () => {
    expectClean(validateServeConfig(toWireServeConfig(TYPED)));
    expectClean(typedServeConfigProblems(TYPED));
  });

  test('its serialized YAML is valid and carries Ray’s names: camelCase fields become snake_case, maps in Ray’s spelling stay', () => {
    const yaml = serializeServeConfig(TYPED);
    expect(typeof yaml).toBe('string');
    expect(parse(yaml)).toEqual(WIRE);
    expectClean(validateServeConfig(yaml));
    expectClean(validateServeConfig(yaml, true));
  });

  test('the YAML text does not depend on the order the props were written in', () => {
    const reordered: ServeConfig = {
      applications: [
        { args: { model_id: 'qwen' }, routePrefix: '/', importPath: 'ray.serve.llm:build_openai_app', name: 'chat' },
        { deployments: [{ graceful_shutdown_timeout_s: 5, rayActorOptions: { num_gpus: 1 }, maxOngoingRequests: 8, numReplicas: 'auto', name: 'Embedder' }], httpDisabled: true, importPath: 'embedder.app:app', name: 'embed' },
      ],
      grpcOptions: { grpcServicerFunctions: ['embedder_pb2_grpc.add_EmbedderServicer_to_server'], port: 9000 },
      httpOptions: { port: 8000 },
      proxyLocation: 'EveryNode',
    };
    expect(serializeServeConfig(reordered)).toBe(serializeServeConfig(TYPED));
    expect(serializeServeConfig(TYPED).split('\n').slice(0, 4)).toEqual(['proxy_location: EveryNode', 'http_options:', '  port: 8000', 'grpc_options:']);
  });

  test('httpDisabled with a routePrefix is an error naming the field', () => {
    const r = typedServeConfigProblems({ applications: [{ importPath: 'a:b' }, { importPath: 'c:d', httpDisabled: true, routePrefix: '/x' }] });
    expectOnlyError(r, 'applications[1].routePrefix', 'must be unset when httpDisabled is true (the application gets no HTTP route); got "/x"');
  });

  test('a single application may omit its name (Serve calls it "default")', () => {
    expectClean(validateServeConfig('applications:\n  - import_path: app.main:app\n'));
  });

  test('import paths with a colon or a final dot attribute are accepted', () => {
    for (const p of ['m:app', 'pkg.mod:build_app', 'pkg.mod.app', '_private.mod:App2']) {
      expectClean(validateServeConfig({ applications: [{ import_path: p }] }));
    }
  });

  // Ray resolves the module part with importlib.import_module, which finds modules by file and
  // directory name: names need not be identifiers. The first two are KubeRay v1.7.0's own samples
  // (ray-service.no-ray-serve-replica.yaml, vllm/ray-service.vllm-tpu-v6e-singlehost.yaml).
  test.each([
    'ray-operator.config.samples.ray-serve.single_deployment_dag:DagNode',
    'ray-operator.config.samples.vllm.serve_tpu:model',
    'my-app.main.app',
    '1mod:app',
    'modèle:élan',
  ])('import_path %p, which Python imports, is accepted', (p) => {
    expectClean(validateServeConfig({ applications: [{ import_path: p }] }));
  });
});

describe('validateServeConfig: rules', () => {
  test('text that is not YAML is rejected at the config itself, with the parser message', () => {
    const r = validateServeConfig('applications: [\n  - a: b');
    const e = expectOnlyError(r, '', 'is not valid YAML: ');
    expect(e.message.length).toBeGreaterThan('is not valid YAML: '.length);
    expect(parseServeConfig('applications: [').error).toBeDefined();
    expect(parseServeConfig('a: 1').value).toEqual({ a: 1 });
  });

  test.each([
    ['"just a string"', '"just a string"'],
    ['- a\n- b', '["a","b"]'],
    ['', 'null'],
  ])('YAML %p that is not a mapping is rejected', (yaml, shown) => {
    expectOnlyError(validateServeConfig(yaml), '', 'must be a mapping', 'applications', `got ${shown}`);
  });

  test.each([
    ['applications: []', 'got []'],
    ['proxy_location: EveryNode', 'got unset'],
    ['applications: {a: 1}', 'got {"a":1}'],
  ])('%p has no applications', (yaml, shown) => {
    expectOnlyError(validateServeConfig(yaml), 'applications', 'at least one application', shown);
  });

  test('duplicate application names are rejected at the second one', () => {
    const r = validateServeConfig({
      applications: [
        { name: 'a', import_path: 'm:a', route_prefix: '/a' },
        { name: 'b', import_path: 'm:b', route_prefix: '/b' },
        { name: 'a', import_path: 'm:c', route_prefix: '/c' },
      ],
    });
    expectOnlyError(r, 'applications[2].name', '"a" is already used by applications[0]', 'unique');
  });

  test('several applications each need a name', () => {
    const r = validateServeConfig({ applications: [{ import_path: 'm:a', route_prefix: '/a' }, { name: 'b', import_path: 'm:b', route_prefix: '/b' }] });
    expectOnlyError(r, 'applications[0].name', 'required when there are 2 applications', 'unset');
  });

  test.each([
    ['module', 'a ":" or "." must separate'],
    ['mod:', 'nothing after ":"'],
    [':app', 'nothing before ":"'],
    ['', 'empty'],
    ['   ', 'whitespace'],
    ['my module:app', 'whitespace'],
    [' mod:app', 'whitespace'],
    ['mod.app\n', 'whitespace'],
    ['pkg/mod:app', 'not "/"'],
    ['a:b:c', 'at most one'],
    ['pkg.mod.', 'ends with "."'],
    ['.mod', 'nothing before "."'],
    ['.pkg.mod:app', 'relative'],
    ['pkg..mod:app', 'empty name between dots'],
    ['pkg.:app', 'empty name between dots'],
    ['mod:app()', 'not a Python identifier'],
    ['mod:app.attr', 'not a Python identifier'],
    ['mod:my-app', 'not a Python identifier'],
    [42, 'got 42'],
  ])('import_path %p, which can never import, is rejected', (p, why) => {
    const e = expectOnlyError(validateServeConfig({ applications: [{ name: 'a', import_path: p }] }), 'applications[0].import_path', 'Python import path', `got ${JSON.stringify(p)}`, why);
    expect(e.message).toContain('"module.path:attribute" or "module.path.attribute"');
  });

  test('a missing import_path is rejected', () => {
    expectOnlyError(validateServeConfig({ applications: [{ name: 'a' }] }), 'applications[0].import_path', 'Python import path', 'got unset');
  });

  test('a route prefix must start with "/" and be unique; null is allowed for gRPC-only apps', () => {
    expectOnlyError(validateServeConfig({ applications: [{ name: 'a', import_path: 'm:a', route_prefix: 'api' }] }), 'applications[0].route_prefix', 'start with "/"', '"api"');
    const dup = validateServeConfig({ applications: [{ name: 'a', import_path: 'm:a' }, { name: 'b', import_path: 'm:b' }] });
    // both default to "/"
    expectOnlyError(dup, 'applications[1].route_prefix', '"/" is already used by applications[0]');
    expectClean(validateServeConfig({ applications: [{ name: 'a', import_path: 'm:a', route_prefix: null }, { name: 'b', import_path: 'm:b', route_prefix: null }] }));
  });

  test('an application that is not a mapping is rejected', () => {
    expectOnlyError(validateServeConfig({ applications: ['m:app'] }), 'applications[0]', 'must be a mapping', '"m:app"');
  });

  test('deployment overrides need a name', () => {
    const r = validateServeConfig({ applications: [{ name: 'a', import_path: 'm:a', deployments: [{ name: 'D' }, { num_replicas: 2 }, 'x'] }] });
    expect(errorPaths(r)).toEqual(['applications[0].deployments[1].name', 'applications[0].deployments[2].name']);
    expect(r.errors[0].message).toContain('needs a name');
  });

  test('target_capacity is an error only when the capacity is managed by an incremental upgrade', () => {
    const yaml = 'target_capacity: 40\napplications:\n  - {name: a, import_path: "m:a"}\n';
    expectClean(validateServeConfig(yaml, false));
    expectOnlyError(validateServeConfig(yaml, true), 'target_capacity', 'must not be set by hand', 'got 40');
  });

  test('every problem is reported at once', () => {
    const r = validateServeConfig({
      target_capacity: 10,
      applications: [{ name: 'a', import_path: 'bad' }, { name: 'a', import_path: 'm:b', route_prefix: 'x' }],
    }, true);
    expect(errorPaths(r).sort()).toEqual(
      ['applications[0].import_path', 'applications[1].name', 'applications[1].route_prefix', 'target_capacity'].sort(),
    );
  });
});
