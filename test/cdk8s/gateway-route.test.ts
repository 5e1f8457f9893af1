import { ApiObject, Chart, Testing } from 'cdk8s';
import { Gateway, GatewayClass, GrpcRoute, GrpcRouteProps, HttpRoute, HttpRouteProps } from '../../lib/cdk8s';
import { validateGateway, validateRoute } from '../../lib/spec';
import { captureStderr, ofKind, single, synthError } from './helpers';

function chartIn(namespace?: string): Chart {
  return new Chart(Testing.app(), 'test', namespace !== undefined ? { namespace } : {});
}

describe('GatewayClass and Gateway', () => {
  test('Gateway defaults to one HTTP listener named "http" on port 80 and takes the class name from the construct', () => {
    const chart = chartIn('gw');
    const cls = new GatewayClass(chart, 'class', { metadata: { name: 'traefik' }, controllerName: 'traefik.io/gateway-controller' });
    const gw = new Gateway(chart, 'gateway', { metadata: { name: 'inference' }, gatewayClass: cls });
    expect(gw.listeners).toEqual([{ name: 'http', protocol: 'HTTP', port: 80 }]);
    const manifests = Testing.synth(chart);
    const g = single(manifests, 'Gateway');
    expect(g.apiVersion).toBe('gateway.networking.k8s.io/v1');
    expect(g.metadata).toEqual({ name: 'inference', namespace: 'gw' });
    expect(g.spec).toEqual({ gatewayClassName: 'traefik', listeners: [{ name: 'http', protocol: 'HTTP', port: 80 }] });
    expect(validateGateway(g)).toEqual({ errors: [], warnings: [] });
    const c = single(manifests, 'GatewayClass');
    expect(c.spec).toEqual({ controllerName: 'traefik.io/gateway-controller' });
  });

  test('a GatewayClass is cluster-scoped: no namespace, whether the chart or its metadata has one', () => {
    const chart = chartIn('serving');
    new GatewayClass(chart, 'class', { metadata: { name: 'traefik', labels: { team: 'ml' } }, controllerName: 'traefik.io/gateway-controller' });
    new GatewayClass(chart, 'given', { metadata: { name: 'istio', namespace: 'istio-system' }, controllerName: 'istio.io/gateway-controller' });
    new Gateway(chart, 'gateway', { metadata: { name: 'inference' }, gatewayClass: 'traefik' });
    const manifests = Testing.synth(chart);
    expect(ofKind(manifests, 'GatewayClass').map((c) => c.metadata)).toEqual([{ name: 'traefik', labels: { team: 'ml' } }, { name: 'istio' }]);
    expect(single(manifests, 'Gateway').metadata).toEqual({ name: 'inference', namespace: 'serving' });
    const plain = chartIn();
    new GatewayClass(plain, 'class', { metadata: { name: 'traefik' }, controllerName: 'traefik.io/gateway-controller' });
    expect(single(Testing.synth(plain), 'GatewayClass').metadata).toEqual({ name: 'traefik' });
  });

  test('explicit listeners and a class given by name are rendered as given', () => {
    const chart = chartIn();
    const listeners = [
      { name: 'http', protocol: 'HTTP', port: 80 },
      { name: 'grpc', protocol: 'HTTP', port: 9000, hostname: 'grpc.example.com' },
    ];
    new Gateway(chart, 'gateway', { metadata: { name: 'inference' }, gatewayClass: 'istio', listeners });
    expect(single(Testing.synth(chart), 'Gateway').spec).toEqual({ gatewayClassName: 'istio', listeners });
  });

  test('bad listeners fail synthesis with every problem listed', () => {
    const chart = chartIn();
    new Gateway(chart, 'gateway', {
      metadata: { name: 'inference' },
      gatewayClass: 'istio',
      listeners: [
        { name: 'http', protocol: 'HTTP', port: 80 },
        { name: 'http', protocol: 'HTTP', port: 70000 },
      ],
    });
    const message = synthError(chart);
    expect(message).toContain('Gateway/inference: spec.listeners[1].name: "http" is already used');
    expect(message).toContain('Gateway/inference: spec.listeners[1].port: must be an integer from 1 to 65535; got 70000');
  });

  test('a GatewayClass controllerName without a path fails synthesis', () => {
    const chart = chartIn();
    new GatewayClass(chart, 'class', { metadata: { name: 'traefik' }, controllerName: 'traefik' });
    expect(synthError(chart)).toContain('GatewayClass/traefik: spec.controllerName: must be "domain/path"');
  });
});

describe('HttpRoute and GrpcRoute', () => {
  test('HttpRoute renders parentRefs from a Gateway construct (name + namespace), matches, filters, hostnames and weights', () => {
    const chart = chartIn('serving');
    const gw = new Gateway(chart, 'gateway', { metadata: { name: 'inference', namespace: 'gateways' }, gatewayClass: 'istio' });
    const filters = [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'x-model', value: 'qwen' }] } }];
    const route = new HttpRoute(chart, 'route', {
      metadata: { name: 'llm' },
      parents: [gw, { name: 'other', namespace: 'edge', sectionName: 'https' }],
      hostnames: ['llm.example.com'],
      rules: [
        {
          name: 'chat',
          matches: [{ path: { type: 'PathPrefix', value: '/v1' }, headers: [{ name: 'x-tenant', value: 'a' }], method: 'POST' }],
          filters,
          backendRefs: [
            { name: 'llm-blue-serve-svc', port: 8000, weight: 90 },
            { name: 'llm-green-serve-svc', port: 8000, weight: 10 },
          ],
        },
        { backendRefs: [{ name: 'fallback', port: 8000 }] },
      ],
    });
    const m = single(Testing.synth(chart), 'HTTPRoute');
    expect(m.apiVersion).toBe('gateway.networking.k8s.io/v1');
    expect(m.metadata).toEqual({ name: 'llm', namespace: 'serving' });
    expect(m.spec.parentRefs).toEqual([
      { name: 'inference', namespace: 'gateways' },
      { name: 'other', namespace: 'edge', sectionName: 'https' },
    ]);
    expect(m.spec.hostnames).toEqual(['llm.example.com']);
    expect(m.spec.rules).toEqual([
      {
        name: 'chat',
        matches: [{ path: { type: 'PathPrefix', value: '/v1' }, headers: [{ name: 'x-tenant', value: 'a' }], method: 'POST' }],
        filters,
        backendRefs: [
          { name: 'llm-blue-serve-svc', port: 8000, weight: 90 },
          { name: 'llm-green-serve-svc', port: 8000, weight: 10 },
        ],
      },
      { backendRefs: [{ name: 'fallback', port: 8000 }] },
    ]);
    expect(route.rules).toHaveLength(2);
    expect(validateRoute(m)).toEqual({ errors: [], warnings: [] });
  });

  test('a Gateway in the chart namespace gives a parentRef with that namespace; no namespace gives none', () => {
    const namespaced = chartIn('serving');
    const gw = new Gateway(namespaced, 'gateway', { metadata: { name: 'inference' }, gatewayClass: 'istio' });
    new HttpRoute(namespaced, 'route', { metadata: { name: 'r' }, parents: [gw], rules: [{ backendRefs: [{ name: 's', port: 80 }] }] });
    expect(single(Testing.synth(namespaced), 'HTTPRoute').spec.parentRefs).toEqual([{ name: 'inference', namespace: 'serving' }]);

    const plain = chartIn();
    const gw2 = new Gateway(plain, 'gateway', { metadata: { name: 'inference' }, gatewayClass: 'istio' });
    new HttpRoute(plain, 'route', { metadata: { name: 'r' }, parents: [gw2], rules: [{ backendRefs: [{ name: 's', port: 80 }] }] });
    expect(single(Testing.synth(plain), 'HTTPRoute').spec.parentRefs).toEqual([{ name: 'inference' }]);
  });

  test('GrpcRoute renders kind GRPCRoute with method matches and weights', () => {
    const chart = chartIn('serving');
    const gw = new Gateway(chart, 'gateway', { metadata: { name: 'inference' }, gatewayClass: 'istio', listeners: [{ name: 'grpc', protocol: 'HTTP', port: 9000 }] });
    new GrpcRoute(chart, 'route', {
      metadata: { name: 'embedder' },
      parents: [gw],
      rules: [
        {
          matches: [{ method: { type: 'Exact', service: 'embedder.Embedder', method: 'Embed' } }],
          backendRefs: [
            { name: 'a-serve-svc', port: 9000, weight: 3 },
            { name: 'b-serve-svc', port: 9000, weight: 1 },
          ],
        },
      ],
    });
    const m = single(Testing.synth(chart), 'GRPCRoute');
    expect(m.apiVersion).toBe('gateway.networking.k8s.io/v1');
    expect(m.spec.parentRefs).toEqual([{ name: 'inference', namespace: 'serving' }]);
    expect(m.spec.rules[0].matches).toEqual([{ method: { type: 'Exact', service: 'embedder.Embedder', method: 'Embed' } }]);
    expect(m.spec.rules[0].backendRefs.map((b: any) => b.weight)).toEqual([3, 1]);
  });

  test('invalid weights and a missing port fail synthesis, listing each', () => {
    const chart = chartIn();
    new HttpRoute(chart, 'route', {
      metadata: { name: 'llm' },
      parents: [{ name: 'gw' }],
      rules: [{ backendRefs: [{ name: 'a', port: 8000, weight: -1 }, { name: 'b', port: 8000, weight: 1_000_001 }, { name: 'c', port: undefined as unknown as number }] }],
    });
    const message = synthError(chart);
    expect(message).toContain('HTTPRoute/llm: spec.rules[0].backendRefs[0].weight: must be an integer from 0 to 1000000; got -1');
    expect(message).toContain('HTTPRoute/llm: spec.rules[0].backendRefs[1].weight: must be an integer from 0 to 1000000; got 1000001');
    expect(message).toContain('HTTPRoute/llm: spec.rules[0].backendRefs[2].port');
  });

  test('all-zero weights are a warning on stderr; synthesis succeeds', () => {
    const chart = chartIn();
    new HttpRoute(chart, 'route', { metadata: { name: 'llm' }, parents: [{ name: 'gw' }], rules: [{ backendRefs: [{ name: 'a', port: 8000, weight: 0 }] }] });
    const { result, stderr } = captureStderr(() => Testing.synth(chart));
    expect(result).toHaveLength(1);
    expect(stderr).toContain('warning: HTTPRoute/llm: spec.rules[0].backendRefs: all weights are 0');
  });

  test('a route without parents or rules (a JavaScript or Python caller) fails synthesis naming the prop, not with a TypeError', () => {
    const chart = chartIn();
    const grpc = new GrpcRoute(chart, 'grpc', { metadata: { name: 'embedder' }, rules: [{ backendRefs: [{ name: 's', port: 9000 }] }] } as unknown as GrpcRouteProps);
    new HttpRoute(chart, 'http', { metadata: { name: 'llm' }, parents: [{ name: 'gw' }] } as unknown as HttpRouteProps);
    expect(grpc.rules).toEqual([{ backendRefs: [{ name: 's', port: 9000 }] }]);
    const lines = synthError(chart).split('\n').slice(1).map((l) => l.trim());
    expect(lines).toEqual([
      '[test/grpc] GRPCRoute/embedder: parents: is required: the Gateways (Gateway constructs or {name, namespace, sectionName, port} references) the route attaches to; got unset',
      "[test/http] HTTPRoute/llm: rules: is required: the route's rules, each with its weighted backendRefs; got unset",
    ]);
  });

  test('a gRPC method match Gateway API refuses fails synthesis', () => {
    const chart = chartIn();
    new GrpcRoute(chart, 'grpc', { metadata: { name: 'embedder' }, parents: [{ name: 'gw' }], rules: [{ matches: [{ method: { service: 'my service', method: '/x' } }], backendRefs: [{ name: 's', port: 9000 }] }] });
    const message = synthError(chart);
    expect(message).toContain('GRPCRoute/embedder: spec.rules[0].matches[0].method.service: "my service" is not a gRPC service name');
    expect(message).toContain('GRPCRoute/embedder: spec.rules[0].matches[0].method.method: "/x" is not a gRPC method name');
  });

  test('ApiObject.of works on routes and gateways', () => {
    const chart = chartIn();
    const gw = new Gateway(chart, 'gateway', { metadata: { name: 'inference' }, gatewayClass: 'istio' });
    const route = new HttpRoute(chart, 'route', { metadata: { name: 'r' }, parents: [gw], rules: [{ backendRefs: [{ name: 's', port: 80 }] }] });
    expect(ApiObject.of(gw)).toBe(gw.apiObject);
    expect(ApiObject.of(route).kind).toBe('HTTPRoute');
  });
});
