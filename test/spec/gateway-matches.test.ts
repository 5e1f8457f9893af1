/**
 * Route matches as Gateway API's own CRDs check them (the pinned v1.6.1 `GRPCMethodMatch`,
 * `HTTPPathMatch`, header and query parameter matches, and the match limits). Each example is
 * accepted or refused by the CRD's schema or CEL rules, as quoted in the comments.
 */
import { validateRoute } from '../../lib/spec';
import { expectClean, expectOnlyError } from './fixtures';

function grpcRoute(matches: unknown[] | undefined): any {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'GRPCRoute',
    metadata: { name: 'embedder', namespace: 'serving' },
    spec: { parentRefs: [{ name: 'inference' }], rules: [{ ...(matches ? { matches } : {}), backendRefs: [{ name: 'embedder-serve-svc', port: 9000 }] }] },
  };
}

function httpRoute(matches: unknown[] | undefined): any {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name: 'llm', namespace: 'serving' },
    spec: { parentRefs: [{ name: 'inference' }], rules: [{ ...(matches ? { matches } : {}), backendRefs: [{ name: 'llm-serve-svc', port: 8000 }] }] },
  };
}

const METHOD = 'spec.rules[0].matches[0].method';
const SERVICE_PATTERN = '^(?i)\\.?[a-z_][a-z_0-9]*(\\.[a-z_][a-z_0-9]*)*$';
const METHOD_PATTERN = '^[A-Za-z_][A-Za-z_0-9]*$';

describe('GRPCRoute method matches', () => {
  // The CRD's own examples (`service: foo.bar`, `foo.bar.v2`), Core support (service and method),
  // an Exact match of the method alone (implementation-specific support, but admitted), case and a
  // leading dot (the pattern's `(?i)` and `\.?`), and no method match at all (every method).
  test.each([
    [{ service: 'foo.bar' }],
    [{ service: 'foo.bar.v2' }],
    [{ service: 'llm.Generator', method: 'Generate' }],
    [{ type: 'Exact', method: 'Generate' }],
    [{ service: 'Foo_Bar.V1' }],
    [{ service: '.grpc.health.v1.Health', method: 'Check' }],
  ])('Exact %j is admitted', (method) => {
    expectClean(validateRoute(grpcRoute([{ method }])));
  });

  test('a match without a method, and a rule without matches, match every gRPC request', () => {
    expectClean(validateRoute(grpcRoute([{ headers: [{ name: 'x-tenant', value: 'a' }] }])));
    expectClean(validateRoute(grpcRoute(undefined)));
  });

  test.each([
    ['service', { service: 'my service' }, '"my service"', SERVICE_PATTERN],
    ['service', { service: 'foo/Bar' }, '"foo/Bar"', SERVICE_PATTERN],
    ['service', { service: '1foo' }, '"1foo"', SERVICE_PATTERN],
    ['service', { service: 'foo..bar' }, '"foo..bar"', SERVICE_PATTERN],
    ['service', { service: '' }, '""', SERVICE_PATTERN],
    ['method', { method: '/x' }, '"/x"', METHOD_PATTERN],
    ['method', { service: 'foo.bar', method: 'foo.Bar' }, '"foo.Bar"', METHOD_PATTERN],
    ['method', { method: 'Get-Thing' }, '"Get-Thing"', METHOD_PATTERN],
  ])('Exact %s of %j is refused (the CRD\'s "must only contain valid characters" rule), naming the value and the pattern', (field, method, shown, pattern) => {
    expectOnlyError(validateRoute(grpcRoute([{ method }])), `${METHOD}.${field}`, shown, pattern);
  });

  test('RegularExpression matches are not held to the Exact patterns', () => {
    expectClean(validateRoute(grpcRoute([{ method: { type: 'RegularExpression', service: 'foo\\..*', method: 'Get.*' } }])));
    expectClean(validateRoute(grpcRoute([{ method: { type: 'RegularExpression', service: 'my service' } }])));
  });

  test.each([[{}], [{ type: 'Exact' }], [{ type: 'RegularExpression' }]])("%j is refused: \"One or both of 'service' or 'method' must be specified\"", (method) => {
    expectOnlyError(validateRoute(grpcRoute([{ method }])), METHOD, 'neither service nor method');
  });

  test('a type other than Exact or RegularExpression is refused with the allowed types', () => {
    expectOnlyError(validateRoute(grpcRoute([{ method: { type: 'Prefix', service: 'foo' } }])), `${METHOD}.type`, '"Prefix"', 'allowed: Exact, RegularExpression');
  });

  test('service and method hold at most 1024 characters', () => {
    expectClean(validateRoute(grpcRoute([{ method: { service: 'a'.repeat(1024), method: 'b'.repeat(1024) } }])));
    expectOnlyError(validateRoute(grpcRoute([{ method: { service: 'a'.repeat(1025) } }])), `${METHOD}.service`, 'is 1025 characters long', 'at most 1024');
    expectOnlyError(validateRoute(grpcRoute([{ method: { type: 'RegularExpression', method: 'b'.repeat(1025) } }])), `${METHOD}.method`, 'is 1025 characters long', 'at most 1024');
  });
});

describe('header and query parameter matches', () => {
  const HEADERS = 'spec.rules[0].matches[0].headers';

  test('token names and values of 1 to 4096 characters are admitted', () => {
    expectClean(validateRoute(grpcRoute([{ headers: [{ name: 'x-version', value: 'v2' }, { type: 'RegularExpression', name: "x_a!#$%&'*+-.^`|~", value: 'v.*' }] }])));
    expectClean(validateRoute(httpRoute([{ headers: [{ name: 'x-long', value: 'v'.repeat(4096) }] }])));
  });

  test('a name that is not an RFC 7230 token, an empty or too long value, and a bad type are refused', () => {
    expectOnlyError(validateRoute(grpcRoute([{ headers: [{ name: 'x version', value: 'v2' }] }])), `${HEADERS}[0].name`, '"x version"', '1 to 256 characters');
    expectOnlyError(validateRoute(grpcRoute([{ headers: [{ name: 'x-version', value: '' }] }])), `${HEADERS}[0].value`, '1 to 4096 characters', 'got 0 characters');
    expectOnlyError(validateRoute(httpRoute([{ headers: [{ name: 'x-version', value: 'v'.repeat(4097) }] }])), `${HEADERS}[0].value`, '1 to 4096 characters', 'got 4097 characters');
    expectOnlyError(validateRoute(httpRoute([{ headers: [{ type: 'Prefix', name: 'x-version', value: 'v' }] }])), `${HEADERS}[0].type`, '"Prefix"', 'Exact, RegularExpression');
  });

  test('the same name twice is refused (the list is a map keyed by name), and more than 16 matches', () => {
    expectOnlyError(validateRoute(grpcRoute([{ headers: [{ name: 'x-version', value: 'a' }, { name: 'x-version', value: 'b' }] }])), `${HEADERS}[1].name`, '"x-version"', 'already matched by');
    const many = Array.from({ length: 17 }, (_, i) => ({ name: `x-${i}`, value: 'v' }));
    expectOnlyError(validateRoute(httpRoute([{ headers: many }])), HEADERS, 'at most 16 header matches', 'got 17');
    expectClean(validateRoute(httpRoute([{ headers: many.slice(0, 16) }])));
  });

  test('query parameter values hold 1 to 1024 characters', () => {
    const at = 'spec.rules[0].matches[0].queryParams[0].value';
    expectClean(validateRoute(httpRoute([{ queryParams: [{ name: 'model', value: 'q'.repeat(1024) }] }])));
    expectOnlyError(validateRoute(httpRoute([{ queryParams: [{ name: 'model', value: 'q'.repeat(1025) }] }])), at, '1 to 1024 characters', 'got 1025 characters');
  });
});

describe('HTTPRoute path and method matches', () => {
  const PATH = 'spec.rules[0].matches[0].path';

  test.each(['/', '/fruit', '/v1/chat/completions', '/a%2Eb', "/a-b_c.d~e!$&'()*+,;=:@"])('PathPrefix %p is admitted', (value) => {
    expectClean(validateRoute(httpRoute([{ path: { type: 'PathPrefix', value } }])));
  });

  test.each([
    ['fruit', 'must start with "/"'],
    ['/a//b', 'must not contain "//"'],
    ['/a/./b', 'must not contain "/./"'],
    ['/a/../b', 'must not contain "/../"'],
    ['/a%2fb', 'must not contain "%2f"'],
    ['/a%2Fb', 'must not contain "%2F"'],
    ['/a#b', 'must not contain "#"'],
    ['/a/..', 'must not end with "/.."'],
    ['/a/.', 'must not end with "/."'],
    ['/a b', 'must only contain the characters of'],
    ['/%zz', 'must only contain the characters of'],
  ])('Exact %p is refused: %s', (value, reason) => {
    expectOnlyError(validateRoute(httpRoute([{ path: { type: 'Exact', value } }])), `${PATH}.value`, JSON.stringify(value), reason);
  });

  test('a path without a type is a PathPrefix (the CRD default) and held to the same rules; RegularExpression is not', () => {
    expectOnlyError(validateRoute(httpRoute([{ path: { value: 'fruit' } }])), `${PATH}.value`, '"fruit"', 'in a PathPrefix match');
    expectClean(validateRoute(httpRoute([{ path: { type: 'RegularExpression', value: '/a b//.*' } }])));
  });

  test('a path type outside Exact, PathPrefix, RegularExpression and a method outside HTTP\'s are refused with the allowed values', () => {
    expectOnlyError(validateRoute(httpRoute([{ path: { type: 'Prefix', value: '/' } }])), `${PATH}.type`, '"Prefix"', 'Exact, PathPrefix, RegularExpression');
    expectOnlyError(validateRoute(httpRoute([{ method: 'get' }])), 'spec.rules[0].matches[0].method', '"get"', 'GET, HEAD, POST, PUT, DELETE, CONNECT, OPTIONS, TRACE, PATCH');
    expectClean(validateRoute(httpRoute([{ method: 'POST' }])));
  });
});

describe('how many matches', () => {
  const pathMatch = (i: number) => ({ path: { type: 'Exact', value: `/p${i}` } });
  const serviceMatch = (i: number) => ({ method: { service: `svc${i}` } });

  test('a rule holds at most 64 matches', () => {
    expectClean(validateRoute(grpcRoute(Array.from({ length: 64 }, (_, i) => serviceMatch(i)))));
    expectOnlyError(validateRoute(grpcRoute(Array.from({ length: 65 }, (_, i) => serviceMatch(i)))), 'spec.rules[0].matches', 'at most 64 matches', 'got 65');
  });

  test('a route holds at most 128 matches across its rules; an HTTPRoute rule without matches counts as its default match', () => {
    const rule = (matches?: unknown[]) => ({ ...(matches ? { matches } : {}), backendRefs: [{ name: 'llm-serve-svc', port: 8000 }] });
    const full = Array.from({ length: 64 }, (_, i) => pathMatch(i));
    const r = httpRoute(undefined);
    r.spec.rules = [rule(full), rule(full)];
    expectClean(validateRoute(r));
    r.spec.rules.push(rule());
    expectOnlyError(validateRoute(r), 'spec.rules', 'hold 129 matches in all', 'at most 128');
    // GRPCRoute has no default match: a rule without matches counts none.
    const g = grpcRoute(undefined);
    g.spec.rules = [rule(Array.from({ length: 64 }, (_, i) => serviceMatch(i))), rule(Array.from({ length: 64 }, (_, i) => serviceMatch(i))), rule()];
    expectClean(validateRoute(g));
  });
});
