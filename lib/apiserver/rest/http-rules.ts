/**
 * The REST routes of a set of services, read from each method's `google.api.http` option (and its
 * `additional_bindings`) in the generated descriptors: the single source the REST transcoder and
 * the OpenAPI document are built from.
 */
import type { DescMethod, DescService } from '@bufbuild/protobuf';
import { getOption, hasOption } from '@bufbuild/protobuf';
import { http } from '../gen/google/api/annotations_pb';
import type { HttpRule } from '../gen/google/api/http_pb';
import { PathTemplate, parsePathTemplate } from './path-template';

/** One REST binding of an RPC. */
export interface HttpRoute {
  /** Upper-case HTTP method. */
  readonly httpMethod: string;
  readonly template: PathTemplate;
  /** `''` (no body), `*` (every field not in the path) or a top-level request field name. */
  readonly body: string;
  /** `''` (the whole response) or a top-level response field name. */
  readonly responseBody: string;
  readonly method: DescMethod;
}

function patternOf(rule: HttpRule): { httpMethod: string; path: string } | undefined {
  const p = rule.pattern;
  switch (p.case) {
    case 'get':
    case 'put':
    case 'post':
    case 'delete':
    case 'patch':
      return { httpMethod: p.case.toUpperCase(), path: p.value };
    case 'custom':
      return { httpMethod: p.value.kind.toUpperCase(), path: p.value.path };
    default:
      return undefined;
  }
}

function checkField(method: DescMethod, which: 'body' | 'response_body', name: string): void {
  if (name === '' || (which === 'body' && name === '*')) return;
  const message = which === 'body' ? method.input : method.output;
  if (!message.fields.some((f) => f.name === name)) throw new Error(`${method.parent.typeName}.${method.name}: ${which} ${JSON.stringify(name)} is not a field of ${message.typeName}`);
}

/** Every route of `services`; throws naming the method when a rule is malformed. */
export function httpRoutes(services: readonly DescService[]): HttpRoute[] {
  const routes: HttpRoute[] = [];
  for (const service of services) {
    for (const method of service.methods) {
      if (!hasOption(method, http)) continue;
      const top = getOption(method, http);
      for (const rule of [top, ...top.additionalBindings]) {
        const pattern = patternOf(rule);
        if (!pattern) throw new Error(`${service.typeName}.${method.name}: google.api.http rule without a pattern`);
        checkField(method, 'body', rule.body);
        checkField(method, 'response_body', rule.responseBody);
        const template = parsePathTemplate(pattern.path);
        for (const fieldPath of template.fieldPaths) {
          if (!method.input.fields.some((f) => f.name === fieldPath.split('.')[0])) {
            throw new Error(`${service.typeName}.${method.name}: path variable ${fieldPath} is not a field of ${method.input.typeName}`);
          }
        }
        routes.push({ httpMethod: pattern.httpMethod, template, body: rule.body, responseBody: rule.responseBody, method });
      }
    }
  }
  return routes;
}
