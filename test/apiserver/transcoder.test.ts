/**
 * The REST transcoder: path templates (custom verbs, multi-segment variables, decoding), the routes
 * read from the generated descriptors' `google.api.http` annotations, and request binding from path,
 * query and body — exercised route by route from the annotations, not from a hand-written list.
 */
import { Code, ConnectError } from '@connectrpc/connect';
import { create, toJson, type DescField, type DescMessage } from '@bufbuild/protobuf';
import { API_SERVICES } from '../../lib/apiserver/services';
import { httpRoutes } from '../../lib/apiserver/rest/http-rules';
import { matchPathTemplate, openApiPath, parsePathTemplate } from '../../lib/apiserver/rest/path-template';
import { bindRequest } from '../../lib/apiserver/rest/request-binding';
import { RayServiceService } from '../../lib/apiserver/gen/rayshift/v1/rayservice_service_pb';

const routes = httpRoutes(API_SERVICES);

describe('path templates', () => {
  test('single-segment variables stop at a custom verb', () => {
    const t = parsePathTemplate('/v1/namespaces/{namespace}/things/{name}:plan');
    expect(t.verb).toBe('plan');
    expect(matchPathTemplate(t, '/v1/namespaces/a/things/b:plan')).toEqual(new Map([['namespace', 'a'], ['name', 'b']]));
    expect(matchPathTemplate(t, '/v1/namespaces/a/things/b')).toBeUndefined();
    expect(matchPathTemplate(t, '/v1/namespaces/a/things/b:other')).toBeUndefined();
    expect(matchPathTemplate(parsePathTemplate('/v1/things/{name}'), '/v1/things/b:plan')).toBeUndefined();
  });

  test('multi-segment patterns, ** and percent-decoding', () => {
    const t = parsePathTemplate('/v1/{parent=projects/*/locations/*}/items/{id=**}');
    expect(matchPathTemplate(t, '/v1/projects/p/locations/l/items/a/b%2Fc')).toEqual(new Map([['parent', 'projects/p/locations/l'], ['id', 'a/b/c']]));
    expect(matchPathTemplate(t, '/v1/projects/p/items/x')).toBeUndefined();
    expect(matchPathTemplate(parsePathTemplate('/v1/x/{name}'), '/v1/x/a%20b')).toEqual(new Map([['name', 'a b']]));
    expect(matchPathTemplate(parsePathTemplate('/v1/x/{name}'), '/v1/x/%E0%A4%A')).toBeUndefined();
    expect(openApiPath(t)).toBe('/v1/{parent}/items/{id}');
  });

  test('malformed templates are refused with the template named', () => {
    expect(() => parsePathTemplate('v1/x')).toThrow(/v1\/x: must start with/);
    expect(() => parsePathTemplate('/v1/{name')).toThrow(/unclosed/);
    expect(() => parsePathTemplate('/v1/{na-me}')).toThrow(/invalid field path/);
  });
});

describe('routes from the annotations', () => {
  test('every RPC of every service has a REST binding', () => {
    const bound = new Set(routes.map((r) => r.method));
    for (const s of API_SERVICES) for (const m of s.methods) expect(bound.has(m)).toBe(true);
  });

  test('no request path matches two routes of the same HTTP method', () => {
    for (const r of routes) {
      const sample = r.template.fieldPaths.reduce((p, f) => p.replace(new RegExp(`\\{${f}[^}]*\\}`), 'x'), r.template.source);
      const clashes = routes.filter((o) => o.httpMethod === r.httpMethod && matchPathTemplate(o.template, sample));
      expect(clashes.map((c) => c.method.name)).toEqual([r.method.name]);
    }
  });

  test('steering verbs and the watch are custom verbs on the RayService path', () => {
    const verbs = routes.filter((r) => r.method.parent === RayServiceService && r.template.verb).map((r) => r.template.verb).sort();
    expect(verbs).toEqual(['abort', 'pause', 'plan', 'promote', 'resume', 'retryAnalysis', 'rollback', 'skipAnalysis', 'watch']);
  });
});

/** A value of the right JSON type for a scalar or enum query field. */
function sampleQueryValue(f: DescField): string | undefined {
  if (f.fieldKind === 'enum') return f.enum.values[f.enum.values.length - 1].name;
  if (f.fieldKind !== 'scalar') return undefined;
  if (f.scalar === 8 /* BOOL */) return 'true';
  if (f.scalar === 9 /* STRING */) return 'sample';
  return '7';
}

describe('request binding', () => {
  test.each(routes.map((r) => [`${r.httpMethod} ${r.template.source}`, r] as const))('%s binds path, query and body fields', (_name, route) => {
    const input: DescMessage = route.method.input;
    const path = route.template.source.replace(/\{([^}=]+)[^}]*\}/g, (_m, f: string) => `v-${f}`);
    const vars = matchPathTemplate(route.template, path)!;
    expect(vars).toBeDefined();
    const query = new URLSearchParams();
    const expected: Record<string, unknown> = {};
    if (route.body !== '*') {
      for (const f of input.fields) {
        if (route.template.fieldPaths.includes(f.name) || f.name === route.body) continue;
        const v = sampleQueryValue(f);
        if (v === undefined) continue;
        query.set(f.name, v);
        expected[f.jsonName] = f.fieldKind === 'enum' ? v : f.fieldKind === 'scalar' && f.scalar === 8 ? true : f.fieldKind === 'scalar' && f.scalar === 9 ? v : expect.anything();
      }
    }
    const msg = bindRequest(route, vars, query, route.body ? {} : undefined);
    const json = toJson(input, msg) as Record<string, unknown>;
    for (const f of route.template.fieldPaths) expect(json[input.fields.find((x) => x.name === f)!.jsonName]).toBe(`v-${f}`);
    expect(json).toMatchObject(expected);
  });

  const create_ = routes.find((r) => r.method.name === 'CreateRayService')!;
  const plan = routes.find((r) => r.method.name === 'PlanRayService')!;
  const list = routes.find((r) => r.method.name === 'ListRayServices')!;

  test('body "field" fills that field; body "*" fills the request; the path wins over the body', () => {
    const c = bindRequest(create_, new Map([['namespace', 'ns']]), new URLSearchParams('validate_only=true'), { name: 'svc', spec: { serveConfigV2: 'x' } });
    expect(toJson(create_.method.input, c)).toEqual({ namespace: 'ns', validateOnly: true, rayService: { name: 'svc', spec: { serveConfigV2: 'x' } } });
    const p = bindRequest(plan, new Map([['namespace', 'ns'], ['name', 'svc']]), new URLSearchParams(), { name: 'other', executor: 'EXECUTOR_KUBERAY' });
    expect(toJson(plan.method.input, p)).toEqual({ namespace: 'ns', name: 'svc', executor: 'EXECUTOR_KUBERAY' });
  });

  test('query names may be proto or JSON names; enums by number; unknown or bound names are refused', () => {
    const q = bindRequest(list, new Map([['namespace', 'ns']]), new URLSearchParams('pageSize=5&label_selector=a%3Db&executor=2'), undefined);
    expect(toJson(list.method.input, q)).toEqual({ namespace: 'ns', pageSize: 5, labelSelector: 'a=b', executor: 'EXECUTOR_KUBERAY' });
    const refuse = (qs: string, body?: unknown) => {
      try {
        bindRequest(list, new Map([['namespace', 'ns']]), new URLSearchParams(qs), body as never);
      } catch (e) {
        return (e as ConnectError).code;
      }
      return undefined;
    };
    expect(refuse('nope=1')).toBe(Code.InvalidArgument);
    expect(refuse('namespace=other')).toBe(Code.InvalidArgument);
    expect(refuse('page_size=many')).toBe(Code.InvalidArgument);
    expect(refuse('', { a: 1 })).toBe(Code.InvalidArgument);
    expect(() => bindRequest(plan, new Map([['namespace', 'ns'], ['name', 'x']]), new URLSearchParams('x=1'), {})).toThrow(ConnectError);
  });

  test('a field mask in the query may use field names', () => {
    const patch = routes.find((r) => r.method.name === 'PatchRayService')!;
    const m = bindRequest(patch, new Map([['namespace', 'ns'], ['name', 'n']]), new URLSearchParams('update_mask=spec.serve_config_v2,labels'), {});
    expect((m as unknown as { updateMask: { paths: string[] } }).updateMask.paths).toEqual(['spec.serve_config_v2', 'labels']);
    expect(create(patch.method.input).$typeName).toBe('rayshift.v1.PatchRayServiceRequest');
  });
});
