/**
 * Generated REST requests from the API's own `google.api.http` rules: every route with its variables
 * filled by names the handlers reach Kubernetes with, percent-encoded or not, with bad escapes,
 * encoded slashes and NULs; wrong custom verbs, extra or missing segments, any method; query
 * parameters named after request fields (with values of the wrong type), unknown or malformed ones;
 * bodies that are the message, noise on it, or not JSON, with or without a JSON content type.
 */
import fc from 'fast-check';
import { API_SERVICES } from '../../../lib/apiserver/services';
import { httpRoutes, type HttpRoute } from '../../../lib/apiserver/rest/http-rules';
import { jsonBody, nameValue, namespaceValue } from './messages';
import { authKind, type FuzzRequest } from './rpc-requests';

/** Every REST route of the API. */
export const ROUTES: readonly HttpRoute[] = httpRoutes(API_SERVICES);

/** A path segment for a variable value: encoded mostly; raw, or with escapes that do not decode, sometimes. */
const segment = (value: fc.Arbitrary<string>) =>
  fc.tuple(value, fc.nat({ max: 20 })).map(([v, how]) => {
    if (how === 0) return `${encodeURIComponent(v)}%zz`;
    if (how === 1) return `${encodeURIComponent(v)}%`;
    if (how === 2) return '%c3%28'; // a truncated UTF-8 sequence
    if (how === 3) return `${encodeURIComponent(v)}%00`;
    if (how === 4) return v.replace(/[^A-Za-z0-9._~:@!$&'()*+,;=-]/g, (c) => encodeURIComponent(c)); // sub-delims raw
    return encodeURIComponent(v);
  });

/** The route's path with generated variable values; `verb` replaces the custom verb when given. */
function pathOf(route: HttpRoute, values: readonly string[], verb: string | undefined): string {
  let i = 0;
  const parts = route.template.pieces.map((p) => (p.kind === 'variable' ? values[i++ % values.length] : 'literal' in p.pattern ? p.pattern.literal : values[i++ % values.length]));
  const v = verb ?? (route.template.verb !== undefined ? `:${route.template.verb}` : '');
  return `/${parts.join('/')}${v}`;
}

/** How the path differs from the route: not at all mostly; or by verb, segments, slashes, dot segments. */
const pathChange = fc.oneof(
  { arbitrary: fc.constant('none' as const), weight: 20 },
  { arbitrary: fc.constantFrom('verb' as const, 'extra' as const, 'drop' as const, 'slashes' as const, 'trailing' as const, 'dots' as const, 'upper' as const), weight: 1 },
);

const VERBS = [':nope', ':', '::pause', ':PAUSE', ':pause:pause', ':%70ause'];

/** Query parameters: none mostly; request fields with values of every type, unknown, repeated or malformed ones. */
const query = fc.oneof(
  { arbitrary: fc.constant(''), weight: 8 },
  {
    arbitrary: fc
      .array(
        fc.tuple(
          fc.constantFrom('page_size', 'pageSize', 'page_token', 'label_selector', 'executor', 'validate_only', 'update_mask', 'etag', 'name', 'namespace', 'ray_service.spec.serve_config_v2', 'ray_service', 'nope', 'a.b.c', '', '__proto__'),
          fc.oneof(fc.constantFrom('', '10', '-1', '2147483648', 'abc', 'true', 'EXECUTOR_KUBERAY', 'EXECUTOR_NOPE', '1', 'spec', 'a=b'), fc.string({ maxLength: 8 }).map(encodeURIComponent)),
        ),
        { minLength: 1, maxLength: 3 },
      )
      .map((pairs) => `?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}`),
    weight: 3,
  },
  { arbitrary: fc.constantFrom('?', '?&&=', '?page_size=%zz', '?a=%', `?x=${'y'.repeat(5000)}`, '?page_size=1&page_size=2'), weight: 1 },
);

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];

/** Paths next to the routes: the server's own endpoints and made-up ones. */
const otherPath = fc.oneof(
  fc.constantFrom('/', '/healthz', '/readyz', '/metrics', '/openapi.json', '/ui', '/ui/x', '/apis', '/apis/rayshift/v1', '/apis/rayshift/v1/namespaces', '/apis/rayshift/v2/rayservices', '//', '/%', '/..%2f..%2fetc', '*'),
  fc.webPath().map((p) => p || '/'),
);

/** The request body of a route: its body field's message (or the whole request for `*`), noise, or not JSON. */
function bodyOf(route: HttpRoute): fc.Arbitrary<Buffer> {
  if (route.body === '') return fc.oneof({ arbitrary: fc.constant(Buffer.alloc(0)), weight: 10 }, { arbitrary: fc.constantFrom('{}', 'x', '[]').map((t) => Buffer.from(t)), weight: 1 });
  const field = route.body === '*' ? undefined : route.method.input.fields.find((f) => f.name === route.body);
  return field?.fieldKind === 'message' ? jsonBody(field.message) : jsonBody(route.method.input);
}

/** A REST request: mostly one of the routes, now and then another path. */
export const restRequest: fc.Arbitrary<FuzzRequest> = fc
  .record({
    route: fc.constantFrom(...ROUTES),
    onRoute: fc.oneof({ arbitrary: fc.constant(true), weight: 12 }, { arbitrary: fc.constant(false), weight: 1 }),
    other: otherPath,
    values: fc.array(fc.oneof(segment(namespaceValue), segment(nameValue)), { minLength: 4, maxLength: 4 }),
    change: pathChange,
    verb: fc.constantFrom(...VERBS),
    query,
    method: fc.oneof({ arbitrary: fc.constant(undefined), weight: 10 }, { arbitrary: fc.constantFrom(...METHODS), weight: 1 }),
    http: fc.oneof({ arbitrary: fc.constant(1 as const), weight: 3 }, { arbitrary: fc.constant(2 as const), weight: 1 }),
    contentType: fc.oneof(
      { arbitrary: fc.constant('application/json'), weight: 12 },
      { arbitrary: fc.constantFrom(undefined, 'text/plain', 'application/merge-patch+json', 'application/json; charset=utf-16', 'application/x-www-form-urlencoded', 'APPLICATION/JSON'), weight: 1 },
    ),
    gzipped: fc.oneof({ arbitrary: fc.constant(false), weight: 20 }, { arbitrary: fc.constant(true), weight: 1 }),
    accept: fc.constantFrom(undefined, 'application/json', 'text/event-stream', '*/*', 'text/html'),
    auth: authKind,
  })
  .chain((d) => fc.record({ d: fc.constant(d), body: bodyOf(d.route) }))
  .map(({ d, body }): FuzzRequest => {
    const route = d.route;
    let path = d.onRoute ? pathOf(route, d.values, d.change === 'verb' ? d.verb : undefined) : d.other;
    if (d.onRoute) {
      if (d.change === 'extra') path = path.replace(/(:[^/]*)?$/, (v) => `/extra${v}`);
      if (d.change === 'drop') path = path.replace(/\/[^/]*$/, '');
      if (d.change === 'slashes') path = path.replace(/\//g, '//');
      if (d.change === 'trailing') path = `${path}/`;
      if (d.change === 'dots') path = path.replace('/namespaces/', '/namespaces/../namespaces/');
      if (d.change === 'upper') path = path.toUpperCase();
    }
    const headers: Record<string, string> = {};
    if (body.length > 0 && d.contentType !== undefined) headers['content-type'] = d.contentType;
    if (d.gzipped) headers['content-encoding'] = 'gzip';
    if (d.accept !== undefined) headers.accept = d.accept;
    const streaming = route.method.methodKind === 'server_streaming';
    return { http: d.http, method: d.method ?? (d.onRoute ? route.httpMethod : 'GET'), path: `${path}${d.query}`, headers, body, auth: d.auth, streaming };
  });
