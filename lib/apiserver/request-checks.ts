/**
 * Checks every request gets from the descriptors, whatever its protocol: enum values must be values
 * of their enum (protobuf enums are open, so a binary or JSON `42` would otherwise reach a handler as
 * a number no `switch` knows, and Connect's JSON parser drops unknown names silently), the object a
 * request names must be nameable in Kubernetes (`namespace`, `name`), and update-mask paths must name
 * fields of the resource. Failures are INVALID_ARGUMENT with a google.rpc.BadRequest naming the
 * request field.
 */
import { getOption, hasOption, isMessage, ScalarType, type DescEnum, type DescField, type DescMessage, type JsonValue, type Message } from '@bufbuild/protobuf';
import { isReflectList, isReflectMap, isReflectMessage, reflect, type ReflectMessage } from '@bufbuild/protobuf/reflect';
import { dns1123LabelProblem, dns1123SubdomainProblem } from '../spec/names';
import { invalidArgument, type FieldViolation } from './errors';
import { FieldBehavior, field_behavior } from './gen/google/api/field_behavior_pb';

type JsonObject = { [key: string]: JsonValue };

function isObject(v: JsonValue | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Well-known types have their own JSON forms and no enum a request could misuse (NullValue is null). */
function isWellKnown(desc: DescMessage): boolean {
  return desc.typeName.startsWith('google.protobuf.');
}

function enumViolation(e: DescEnum, value: JsonValue, field: string): FieldViolation | undefined {
  const known = typeof value === 'string' ? e.values.some((v) => v.name === value) : typeof value === 'number' ? e.values.some((v) => v.number === value) : true;
  if (known) return undefined;
  return { field, description: `${JSON.stringify(value)} is not a value of ${e.typeName}; allowed: ${e.values.map((v) => v.name).join(', ')}` };
}

/** A message as proto3 JSON (before decoding) or as a reflected message (after). */
type Node = JsonValue | ReflectMessage;

/** The set fields of a message node with their values. */
function fieldsOf(desc: DescMessage, node: unknown): [DescField, unknown][] {
  if (isReflectMessage(node)) return node.fields.filter((f) => node.isSet(f)).map((f) => [f, node.get(f)]);
  if (!isObject(node as JsonValue)) return [];
  return Object.entries(node as JsonObject).flatMap(([key, value]): [DescField, unknown][] => {
    const field = desc.fields.find((f) => f.jsonName === key || f.name === key);
    // Unknown keys and wrong JSON types are the decoder's to refuse.
    return field && value !== null ? [[field, value]] : [];
  });
}

/** The items of a list or map value, each with its path suffix (`[0]`, `["key"]`). */
function itemsOf(value: unknown): [string, unknown][] {
  if (Array.isArray(value) || isReflectList(value)) return [...(value as Iterable<unknown>)].map((v, i) => [`[${i}]`, v]);
  if (isReflectMap(value)) return [...value].map(([k, v]) => [`[${JSON.stringify(String(k))}]`, v]);
  if (isObject(value as JsonValue)) return Object.entries(value as JsonObject).map(([k, v]) => [`[${JSON.stringify(k)}]`, v]);
  return [];
}

/** Collects the unknown enum values under `node` (a message of type `desc`), named by field paths under `prefix`. */
function collect(desc: DescMessage, node: unknown, prefix: string, out: FieldViolation[]): void {
  if (isWellKnown(desc)) return;
  for (const [field, value] of fieldsOf(desc, node)) {
    const at = prefix ? `${prefix}.${field.name}` : field.name;
    const leaf = (v: unknown, path: string) => {
      if (field.enum) {
        const violation = enumViolation(field.enum, v as JsonValue, path);
        if (violation) out.push(violation);
      } else if (field.message) {
        collect(field.message, v, path, out);
      }
    };
    if (field.fieldKind === 'list' || field.fieldKind === 'map') for (const [suffix, v] of itemsOf(value)) leaf(v, at + suffix);
    else leaf(value, at);
  }
}

/**
 * Fails with INVALID_ARGUMENT when a request holds an enum value its enum does not define: a message
 * (numbers) or its proto3 JSON before decoding (names or numbers).
 */
export function requireKnownEnums(desc: DescMessage, request: Message | JsonValue): void {
  const violations: FieldViolation[] = [];
  collect(desc, isMessage(request, desc) ? reflect(desc, request) : (request as Node), '', violations);
  if (violations.length === 0) return;
  const summary = violations.length === 1 ? `${violations[0].field}: ${violations[0].description}` : `${violations.length} fields hold unknown enum values`;
  throw invalidArgument(summary, violations);
}

/**
 * The request fields that name a Kubernetes object, with Kubernetes' rules for them: namespaces are
 * DNS-1123 labels (`ValidateNamespaceName`), and the objects this API reads and writes (custom
 * resources, ConfigMaps) are named by DNS-1123 subdomains (`NameIsDNSSubdomain`).
 */
const IDENTITY_RULES: Readonly<Record<string, { problem: (value: string) => string | undefined; allowed: string }>> = {
  namespace: { problem: dns1123LabelProblem, allowed: "a namespace name: a DNS-1123 label of at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit" },
  name: { problem: dns1123SubdomainProblem, allowed: "an object name: a DNS-1123 subdomain of at most 253 lowercase letters, digits, '-' and '.', each dot-separated part starting and ending with a letter or digit" },
};

function isRequired(field: DescField): boolean {
  return hasOption(field, field_behavior) && getOption(field, field_behavior).includes(FieldBehavior.REQUIRED);
}

/**
 * Fails with INVALID_ARGUMENT, one violation per field, unless the request's top-level `namespace`
 * and `name` are set where the descriptor marks them REQUIRED and follow Kubernetes' naming rules
 * wherever set. Checked before any Kubernetes call, so an empty or path-like value (`../x`) never
 * becomes part of a Kubernetes URL.
 */
export function requireObjectIdentity(desc: DescMessage, request: Message): void {
  const violations: FieldViolation[] = [];
  const message = reflect(desc, request);
  for (const field of desc.fields) {
    const rule = IDENTITY_RULES[field.name];
    if (!rule || field.fieldKind !== 'scalar' || field.scalar !== ScalarType.STRING) continue;
    const value = message.get(field) as string;
    if (value === '') {
      if (isRequired(field)) violations.push({ field: field.name, description: `is required; allowed: ${rule.allowed}` });
      continue;
    }
    const problem = rule.problem(value);
    if (problem) violations.push({ field: field.name, description: `${problem}; allowed: ${rule.allowed}` });
  }
  if (violations.length === 0) return;
  throw invalidArgument(violations.length === 1 ? `${violations[0].field}: ${violations[0].description}` : `${violations.map((v) => v.field).join(' and ')} are invalid`, violations);
}

/** Where a mask path stops being checkable field by field: map keys and Struct contents are free-form. */
function isOpenEnded(field: DescField): boolean {
  return field.fieldKind === 'map' || (field.fieldKind === 'message' && (field.message.typeName === 'google.protobuf.Struct' || field.message.typeName === 'google.protobuf.Value'));
}

function maskPathProblem(resource: DescMessage, path: string, updatable: readonly string[]): string | undefined {
  const top = `top-level paths: ${updatable.join(', ')}`;
  const parts = path.split('.');
  if (!updatable.includes(parts[0])) {
    return `${JSON.stringify(path)} is not an updatable field of ${resource.typeName}; ${top}`;
  }
  let desc = resource;
  for (const [i, part] of parts.entries()) {
    const field = desc.fields.find((f) => f.name === part);
    if (!field) return `${JSON.stringify(path)} names no field: ${desc.typeName} has no ${JSON.stringify(part)} (its fields: ${desc.fields.map((f) => f.name).join(', ')}); ${top}`;
    if (i === parts.length - 1 || isOpenEnded(field)) return undefined;
    if (field.fieldKind !== 'message') return `${JSON.stringify(path)} names no field: ${parts.slice(0, i + 1).join('.')} has no fields; ${top}`;
    desc = field.message;
  }
  return undefined;
}

/**
 * Fails with INVALID_ARGUMENT, naming `maskField` and each bad path, unless every path of an update
 * mask names a field of `resource` (proto names, dotted) under one of the `updatable` top-level fields.
 * Paths may go on into a map (a key) or a Struct (its own keys) without further checks.
 */
export function requireFieldMask(resource: DescMessage, paths: readonly string[], updatable: readonly string[], maskField = 'update_mask'): void {
  const violations = paths.flatMap((path, i) => {
    const problem = maskPathProblem(resource, path, updatable);
    return problem ? [{ field: `${maskField}.paths[${i}]`, description: problem }] : [];
  });
  if (violations.length === 0) return;
  throw invalidArgument(violations.length === 1 ? `${maskField}: ${violations[0].description}` : `${maskField} has ${violations.length} invalid paths`, violations);
}
