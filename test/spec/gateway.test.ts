import { MAX_BACKEND_WEIGHT, validateGateway, validateRoute } from '../../lib/spec';
import { clone, errorPaths, expectClean, expectOnlyError } from './fixtures';

const GATEWAY = {
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'Gateway',
  metadata: { name: 'inference', namespace: 'serving' },
  spec: {
    gatewayClassName: 'traefik',
    listeners: [
      { name: 'http', protocol: 'HTTP', port: 80 },
      { name: 'grpc', protocol: 'HTTP', port: 9000 },
    ],
  },
};

const ROUTE = {
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'HTTPRoute',
  metadata: { name: 'llm', namespace: 'serving' },
  spec: {
    parentRefs: [{ name: 'inference', namespace: 'serving' }],
    rules: [
      {
        matches: [{ path: { type: 'PathPrefix', value: '/' } }],
        backendRefs: [
          { name: 'llm-abcde-serve-svc', port: 8000, weight: 70 },
          { name: 'llm-fghij-serve-svc', port: 8000, weight: 30 },
        ],
      },
    ],
  },
};

function gateway(): any {
  return clone(GATEWAY);
}
function route(): any {
  return clone(ROUTE);
}

describe('validateGateway', () => {
  test('a valid Gateway with two listeners has no findings', () => {
    expectClean(validateGateway(gateway()));
  });

  test.each([0, -1, 65536, 80.5, '80'])('listener port %p is rejected with the range', (port) => {
    const g = gateway();
    g.spec.listeners[1].port = port;
    expectOnlyError(validateGateway(g), 'spec.listeners[1].port', 'integer from 1 to 65535', `got ${JSON.stringify(port)}`);
  });

  test.each([1, 65535])('listener port %p is at the edge and valid', (port) => {
    const g = gateway();
    g.spec.listeners[0].port = port;
    expectClean(validateGateway(g));
  });

  test('a missing listener port is rejected', () => {
    const g = gateway();
    delete g.spec.listeners[0].port;
    expectOnlyError(validateGateway(g), 'spec.listeners[0].port', '1 to 65535', 'got unset');
  });

  test('duplicate listener names are rejected at the second listener', () => {
    const g = gateway();
    g.spec.listeners[1].name = 'http';
    expectOnlyError(validateGateway(g), 'spec.listeners[1].name', '"http" is already used');
  });

  test('a listener name that is not a DNS subdomain is rejected', () => {
    const g = gateway();
    g.spec.listeners[0].name = 'HTTP_1';
    expectOnlyError(validateGateway(g), 'spec.listeners[0].name', 'DNS subdomain', '"HTTP_1"');
  });

  test('a listener without a protocol is rejected', () => {
    const g = gateway();
    g.spec.listeners[0].protocol = '';
    expectOnlyError(validateGateway(g), 'spec.listeners[0].protocol', 'required', 'HTTP, HTTPS, TLS, TCP or UDP');
  });

  test('a missing GatewayClass is rejected', () => {
    const g = gateway();
    delete g.spec.gatewayClassName;
    expectOnlyError(validateGateway(g), 'spec.gatewayClassName', 'required', 'unset');
  });

  test('a GatewayClass name that is not a DNS subdomain is rejected', () => {
    const g = gateway();
    g.spec.gatewayClassName = 'Traefik Class';
    expectOnlyError(validateGateway(g), 'spec.gatewayClassName', 'DNS-1123 subdomain', '"Traefik Class"');
  });

  test('no listeners, or more than 64, are rejected', () => {
    const g = gateway();
    g.spec.listeners = [];
    expectOnlyError(validateGateway(g), 'spec.listeners', '1 to 64 listeners', 'got 0');
    g.spec.listeners = Array.from({ length: 65 }, (_, i) => ({ name: `l${i}`, protocol: 'HTTP', port: 1000 + i }));
    expectOnlyError(validateGateway(g), 'spec.listeners', '1 to 64 listeners', 'got 65');
    delete g.spec.listeners;
    expectOnlyError(validateGateway(g), 'spec.listeners', '1 to 64 listeners', 'got unset');
  });

  test('a bad or missing object name is rejected', () => {
    const g = gateway();
    g.metadata.name = 'Inference';
    expectOnlyError(validateGateway(g), 'metadata.name', 'DNS-1123 subdomain');
    delete g.metadata;
    expectOnlyError(validateGateway(g), 'metadata.name', 'required');
  });
});

describe('validateRoute', () => {
  test('a valid weighted HTTPRoute has no findings', () => {
    expectClean(validateRoute(route()));
  });

  test.each([-1, MAX_BACKEND_WEIGHT + 1, 2.5, '50'])('weight %p is rejected with the range', (w) => {
    const r = route();
    r.spec.rules[0].backendRefs[0].weight = w;
    expectOnlyError(validateRoute(r), 'spec.rules[0].backendRefs[0].weight', 'integer from 0 to 1000000', `got ${JSON.stringify(w)}`);
  });

  test('weight 1,000,001 is rejected and 1,000,000 is valid', () => {
    expect(MAX_BACKEND_WEIGHT).toBe(1_000_000);
    const r = route();
    r.spec.rules[0].backendRefs[1].weight = 1_000_001;
    expectOnlyError(validateRoute(r), 'spec.rules[0].backendRefs[1].weight', '0 to 1000000', 'got 1000001');
    r.spec.rules[0].backendRefs[1].weight = 1_000_000;
    expectClean(validateRoute(r));
  });

  test('an unset weight means 1 and is valid; one zero weight next to a positive one is valid', () => {
    const r = route();
    delete r.spec.rules[0].backendRefs[0].weight;
    r.spec.rules[0].backendRefs[1].weight = 0;
    expectClean(validateRoute(r));
  });

  test('a Service backend without a port is rejected', () => {
    const r = route();
    delete r.spec.rules[0].backendRefs[1].port;
    expectOnlyError(validateRoute(r), 'spec.rules[0].backendRefs[1].port', '1 to 65535', 'Service backend', 'got unset');
  });

  test.each([0, 65536, '8000'])('a Service backend port %p is rejected', (port) => {
    const r = route();
    r.spec.rules[0].backendRefs[0].port = port;
    expectOnlyError(validateRoute(r), 'spec.rules[0].backendRefs[0].port', '1 to 65535', `got ${JSON.stringify(port)}`);
  });

  test('a non-Service backend may omit the port', () => {
    const r = route();
    r.spec.rules[0].backendRefs[1] = { group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: 'llm', weight: 30 };
    expectClean(validateRoute(r));
  });

  test('all-zero weights are a warning on the rule, not an error', () => {
    const r = route();
    for (const b of r.spec.rules[0].backendRefs) b.weight = 0;
    const result = validateRoute(r);
    expect(result.errors).toEqual([]);
    expect(result.warnings.map((w) => w.path)).toEqual(['spec.rules[0].backendRefs']);
    expect(result.warnings[0].message).toContain('all weights are 0');
  });

  test('a backend without a name is rejected', () => {
    const r = route();
    r.spec.rules[0].backendRefs[0].name = '';
    expectOnlyError(validateRoute(r), 'spec.rules[0].backendRefs[0].name', 'required');
  });

  test('a route without parents gets a warning; a bad parent name an error', () => {
    const r = route();
    r.spec.parentRefs = [];
    const result = validateRoute(r);
    expect(result.errors).toEqual([]);
    expect(result.warnings.map((w) => w.path)).toEqual(['spec.parentRefs']);
    expect(result.warnings[0].message).toContain('receives no traffic');
    r.spec.parentRefs = [{ name: 'My Gateway' }];
    expectOnlyError(validateRoute(r), 'spec.parentRefs[0].name', 'DNS subdomain', '"My Gateway"');
  });

  test('more than 16 rules are rejected', () => {
    const r = route();
    r.spec.rules = Array.from({ length: 17 }, () => clone(ROUTE.spec.rules[0]));
    expectOnlyError(validateRoute(r), 'spec.rules', 'at most 16 rules', 'got 17 rules');
    r.spec.rules = 'all';
    expectOnlyError(validateRoute(r), 'spec.rules', 'at most 16 rules', 'got "all"');
  });

  test('findings of several rules and backends are reported together', () => {
    const r = route();
    r.spec.rules.push({ backendRefs: [{ name: 'x', weight: -1 }] });
    r.spec.rules[0].backendRefs[0].weight = 2_000_000;
    expect(errorPaths(validateRoute(r)).sort()).toEqual(
      ['spec.rules[0].backendRefs[0].weight', 'spec.rules[1].backendRefs[0].port', 'spec.rules[1].backendRefs[0].weight'].sort(),
    );
  });
});
