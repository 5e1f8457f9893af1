/**
 * The OpenAPI 3.1 document of the REST side, built from the same descriptors and `google.api.http`
 * routes the transcoder serves: one operation per route, path variables as path parameters, the
 * remaining scalar fields as query parameters, `body` as the request body, the proto3 JSON mapping as
 * schemas (int64 as strings, enums by name, well-known types by their JSON forms), server streams
 * as `text/event-stream`, google.rpc.Status as the error body, and the proto comments as
 * descriptions.
 */
import { ScalarType, type DescEnum, type DescField, type DescMessage } from '@bufbuild/protobuf';
import { getOption, hasOption } from '@bufbuild/protobuf';
import { FieldBehavior, field_behavior } from '../gen/google/api/field_behavior_pb';
import { StatusSchema } from '../gen/google/rpc/status_pb';
import { HttpRoute } from '../rest/http-rules';
import { openApiPath } from '../rest/path-template';
import type { CommentLookup } from './proto-comments';

/** A JSON schema object. */
type Schema = Record<string, unknown>;

const WELL_KNOWN: Readonly<Record<string, Schema>> = {
  'google.protobuf.Timestamp': { type: 'string', format: 'date-time' },
  'google.protobuf.Duration': { type: 'string', pattern: '^-?[0-9]+(\\.[0-9]+)?s$' },
  'google.protobuf.FieldMask': { type: 'string', description: 'Comma-separated field paths.' },
  'google.protobuf.Struct': { type: 'object', additionalProperties: true },
  'google.protobuf.Value': {},
  'google.protobuf.ListValue': { type: 'array', items: {} },
  'google.protobuf.Empty': { type: 'object' },
  'google.protobuf.Any': { type: 'object', properties: { '@type': { type: 'string' } }, required: ['@type'], additionalProperties: true },
};

function scalarSchema(t: ScalarType): Schema {
  switch (t) {
    case ScalarType.BOOL:
      return { type: 'boolean' };
    case ScalarType.STRING:
      return { type: 'string' };
    case ScalarType.BYTES:
      return { type: 'string', format: 'byte' };
    case ScalarType.DOUBLE:
      return { type: 'number', format: 'double' };
    case ScalarType.FLOAT:
      return { type: 'number', format: 'float' };
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return { type: 'integer', format: 'int32' };
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return { type: 'integer', format: 'int32', minimum: 0 };
    default:
      return { type: 'string', format: 'int64' };
  }
}

/** Collects component schemas while fields refer to messages and enums. */
class SchemaSet {
  readonly schemas: Record<string, Schema> = {};

  constructor(private readonly comment: CommentLookup) {}

  ref(desc: DescMessage | DescEnum): Schema {
    if (desc.kind === 'message' && WELL_KNOWN[desc.typeName]) return WELL_KNOWN[desc.typeName];
    if (!(desc.typeName in this.schemas)) {
      this.schemas[desc.typeName] = {};
      const description = this.comment(desc);
      const schema = desc.kind === 'enum' ? { type: 'string', enum: desc.values.map((v) => v.name) } : this.message(desc);
      this.schemas[desc.typeName] = description ? { description, ...schema } : schema;
    }
    return { $ref: `#/components/schemas/${desc.typeName}` };
  }

  field(f: DescField): Schema {
    let schema: Schema;
    switch (f.fieldKind) {
      case 'scalar':
        schema = scalarSchema(f.scalar);
        break;
      case 'enum':
        schema = this.ref(f.enum);
        break;
      case 'message':
        schema = this.ref(f.message);
        break;
      case 'list':
        schema = { type: 'array', items: f.listKind === 'scalar' ? scalarSchema(f.scalar) : f.listKind === 'enum' ? this.ref(f.enum) : this.ref(f.message) };
        break;
      case 'map':
        schema = { type: 'object', additionalProperties: f.mapKind === 'scalar' ? scalarSchema(f.scalar) : f.mapKind === 'enum' ? this.ref(f.enum) : this.ref(f.message) };
        break;
    }
    const behaviors = hasOption(f, field_behavior) ? getOption(f, field_behavior) : [];
    if (behaviors.includes(FieldBehavior.OUTPUT_ONLY)) schema = { ...wrap(schema), readOnly: true };
    const description = this.comment(f);
    return description ? { ...wrap(schema), description } : schema;
  }

  message(desc: DescMessage): Schema {
    return { type: 'object', properties: Object.fromEntries(desc.fields.map((f) => [f.jsonName, this.field(f)])) };
  }
}

/** A `$ref` cannot carry siblings in every tool; wrap it so that `readOnly` and `description` can sit next to it. */
function wrap(schema: Schema): Schema {
  return '$ref' in schema ? { allOf: [schema] } : schema;
}

/** Query parameters of the fields a route takes neither from the path nor from the body. */
function queryParameters(route: HttpRoute, set: SchemaSet, comment: CommentLookup): Schema[] {
  if (route.body === '*') return [];
  const bound = new Set([...route.template.fieldPaths.map((p) => p.split('.')[0]), route.body]);
  const out: Schema[] = [];
  for (const f of route.method.input.fields) {
    if (bound.has(f.name) || f.fieldKind === 'map') continue;
    if (f.fieldKind === 'message' && !WELL_KNOWN[f.message.typeName]) continue;
    if (f.fieldKind === 'list' && f.listKind === 'message') continue;
    const description = comment(f);
    out.push({ name: f.name, in: 'query', required: false, ...(description ? { description } : {}), schema: set.field(f), ...(f.fieldKind === 'list' ? { style: 'form', explode: true } : {}) });
  }
  return out;
}

/** Options of `buildOpenApi`. */
export interface OpenApiInfo {
  readonly title: string;
  readonly version: string;
}

/** The OpenAPI 3.1 document of `routes`; `comment` gives descriptions (default: none). */
export function buildOpenApi(routes: readonly HttpRoute[], info: OpenApiInfo, comment: CommentLookup = () => undefined): Record<string, unknown> {
  const set = new SchemaSet(comment);
  const statusRef = set.ref(StatusSchema);
  const paths: Record<string, Record<string, unknown>> = {};
  const seen = new Map<string, number>();
  for (const route of routes) {
    const path = openApiPath(route.template);
    const baseId = `${route.method.parent.name}_${route.method.name}`;
    const n = (seen.get(baseId) ?? 0) + 1;
    seen.set(baseId, n);
    const bodyField = route.body && route.body !== '*' ? route.method.input.fields.find((f) => f.name === route.body) : undefined;
    const requestSchema = route.body === '*' ? set.ref(route.method.input) : bodyField ? set.field(bodyField) : undefined;
    const output = route.responseBody ? set.field(route.method.output.fields.find((f) => f.name === route.responseBody)!) : set.ref(route.method.output);
    const streaming = route.method.methodKind === 'server_streaming';
    const pathParameters = route.template.fieldPaths.map((fieldPath) => {
      const field = route.method.input.fields.find((f) => f.name === fieldPath.split('.')[0])!;
      const description = comment(field);
      return { name: fieldPath, in: 'path', required: true, ...(description ? { description } : {}), schema: fieldPath.includes('.') ? { type: 'string' } : set.field(field) };
    });
    (paths[path] ??= {})[route.httpMethod.toLowerCase()] = {
      operationId: n === 1 ? baseId : `${baseId}_${n}`,
      tags: [route.method.parent.name],
      summary: comment(route.method) ?? `${route.method.parent.name}.${route.method.name}`,
      parameters: [...pathParameters, ...queryParameters(route, set, comment)],
      ...(requestSchema ? { requestBody: { required: true, content: { 'application/json': { schema: requestSchema } } } } : {}),
      responses: {
        '200': streaming
          ? { description: `Server-sent events: \`event: message\` with one ${route.method.output.name} each, \`event: error\` with a google.rpc.Status.`, content: { 'text/event-stream': { schema: { type: 'string', contentMediaType: 'application/json', contentSchema: output } } } }
          : { description: route.method.output.name, content: { 'application/json': { schema: output } } },
        '4XX': { description: 'A client error as google.rpc.Status (INVALID_ARGUMENT/FAILED_PRECONDITION 400, UNAUTHENTICATED 401, PERMISSION_DENIED 403, NOT_FOUND 404, ALREADY_EXISTS/ABORTED 409, RESOURCE_EXHAUSTED 429).', content: { 'application/json': { schema: statusRef } } },
        '5XX': { description: 'A server error as google.rpc.Status (INTERNAL 500, UNIMPLEMENTED 501, UNAVAILABLE 503, DEADLINE_EXCEEDED 504).', content: { 'application/json': { schema: statusRef } } },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: info.title, version: info.version, description: 'rayshift core API (REST transcoding of the gRPC/Connect services). Authenticate with a bearer token issued for audience `rayshift`.', license: { name: 'Apache-2.0', identifier: 'Apache-2.0' } },
    servers: [{ url: '/' }],
    security: [{ bearerAuth: [] }],
    tags: [...new Map(routes.map((r) => [r.method.parent.name, r.method.parent])).values()].map((s) => ({ name: s.name, description: comment(s) ?? `The ${s.name} RPCs.` })),
    paths,
    components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } }, schemas: set.schemas },
  };
}
