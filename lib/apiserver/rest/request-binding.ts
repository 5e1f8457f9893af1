/**
 * Builds an RPC request from a REST request the way gRPC transcoding does: the body fills the
 * request (`body: "*"`) or one field (`body: "field"`), path variables fill their fields, and every
 * other field may come from the query string (`?page_size=10&executor=EXECUTOR_KUBERAY`, nested
 * fields dotted, repeated fields repeated, proto or JSON names). The result is parsed with
 * protobuf's JSON rules between the enum and object-name checks every protocol gets (`request-checks.ts`).
 */
import { Code, ConnectError } from '@connectrpc/connect';
import { ScalarType, fromJson, type DescField, type DescMessage, type JsonObject, type JsonValue, type Message } from '@bufbuild/protobuf';
import { requireKnownEnums, requireObjectIdentity } from '../request-checks';
import type { HttpRoute } from './http-rules';

function fieldNamed(message: DescMessage, name: string): DescField | undefined {
  return message.fields.find((f) => f.name === name || f.jsonName === name);
}

function bad(message: string): ConnectError {
  return new ConnectError(message, Code.InvalidArgument);
}

/** The JSON value of one query or path string for `field` (booleans, enum numbers and field masks converted). */
function scalarJson(field: DescField, text: string): JsonValue {
  const scalar = field.fieldKind === 'scalar' || (field.fieldKind === 'list' && field.listKind === 'scalar') ? field.scalar : undefined;
  if (scalar === ScalarType.BOOL) {
    if (text === 'true' || text === '1' || text === '') return true;
    if (text === 'false' || text === '0') return false;
    throw bad(`${field.name} must be true or false; got ${JSON.stringify(text)}`);
  }
  if (field.fieldKind === 'message' && field.message.typeName === 'google.protobuf.FieldMask') {
    // AIP-161 spells mask paths in the query with field names; the JSON form wants lowerCamelCase.
    return text.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
  }
  const isEnum = field.fieldKind === 'enum' || (field.fieldKind === 'list' && field.listKind === 'enum');
  if (isEnum && /^-?\d+$/.test(text)) return Number(text);
  return text;
}

/** Sets the field at `path` (proto or JSON names, dotted) of `json` from a string. */
function setFromString(json: JsonObject, message: DescMessage, path: string, text: string, source: string): void {
  const parts = path.split('.');
  let target = json;
  let desc = message;
  for (const [i, part] of parts.entries()) {
    const field = fieldNamed(desc, part);
    if (!field) throw bad(`${source} ${JSON.stringify(path)} names no field of ${message.typeName}`);
    if (i < parts.length - 1) {
      if (field.fieldKind !== 'message') throw bad(`${source} ${JSON.stringify(path)}: ${part} is not a message`);
      const next = target[field.jsonName];
      target = (target[field.jsonName] = next && typeof next === 'object' && !Array.isArray(next) ? next : {}) as JsonObject;
      desc = field.message;
      continue;
    }
    if (field.fieldKind === 'map' || (field.fieldKind === 'message' && !field.message.typeName.startsWith('google.protobuf.'))) {
      throw bad(`${source} ${JSON.stringify(path)} is a ${field.fieldKind === 'map' ? 'map' : 'message'}; set it in the body`);
    }
    const value = scalarJson(field, text);
    if (field.fieldKind === 'list') {
      const list = Array.isArray(target[field.jsonName]) ? (target[field.jsonName] as JsonValue[]) : [];
      target[field.jsonName] = [...list, value];
    } else {
      target[field.jsonName] = value;
    }
  }
}

/** The request message of `route` from its path variables, query string and parsed JSON body. */
export function bindRequest(route: HttpRoute, pathVariables: ReadonlyMap<string, string>, query: URLSearchParams, body: JsonValue | undefined): Message {
  const input = route.method.input;
  let json: JsonObject = {};
  if (route.body === '*') {
    if (body !== undefined && (body === null || typeof body !== 'object' || Array.isArray(body))) throw bad('the request body must be a JSON object');
    json = { ...((body as JsonObject | undefined) ?? {}) };
  } else if (route.body !== '') {
    if (body !== undefined) json[fieldNamed(input, route.body)!.jsonName] = body;
  } else if (body !== undefined) {
    throw bad(`${route.httpMethod} ${route.template.source} takes no request body`);
  }
  for (const [path, value] of pathVariables) setFromString(json, input, path, value, 'path variable');
  if (route.body !== '*') {
    const bound = new Set([...pathVariables.keys()].map((p) => p.split('.')[0]));
    if (route.body) bound.add(route.body);
    for (const [key, value] of query) {
      const top = fieldNamed(input, key.split('.')[0]);
      if (top && bound.has(top.name)) throw bad(`query parameter ${JSON.stringify(key)} is bound by the path or the body`);
      setFromString(json, input, key, value, 'query parameter');
    }
  } else if ([...query.keys()].length > 0) {
    throw bad(`${route.template.source} takes every field in the body; no query parameters`);
  }
  // Before decoding, so an unknown enum name is named with its field rather than as a decode failure.
  requireKnownEnums(input, json);
  let request: Message;
  try {
    request = fromJson(input, json);
  } catch (e) {
    throw bad(`the request does not match ${input.typeName}: ${(e as Error).message}`);
  }
  requireObjectIdentity(input, request);
  return request;
}
