import * as fs from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { Problem, ValidationResult } from '../spec/problem';
import { JsonObject, asObject, isObject } from '../spec/read';
import { validateRayService } from '../spec/rayservice';
import { validateCoordinatedPolicy, validateRoleBasedGroup } from '../spec/rbg';
import { validateGateway, validateGatewayClass, validateRoute } from '../spec/gateway';

/** One YAML document of an input file. */
export interface InputDocument {
  /** The file it came from. */
  readonly file: string;
  /** 1-based index of the document in its file. */
  readonly document: number;
  /** Its content. */
  readonly manifest: JsonObject;
}

/** A problem located in an input file, as `rayshift validate --json` prints it. */
export interface LocatedProblem extends Problem {
  /** The file. */
  readonly file: string;
  /** 1-based document index, 0 when the problem is with the file itself. */
  readonly document: number;
  /** The object's kind, or "" when unknown. */
  readonly kind: string;
  /** The object's name, or "" when unknown. */
  readonly name: string;
}

/** Reads and parses every document of every file; unreadable or unparsable input becomes problems. */
export function readDocuments(files: readonly string[]): { documents: InputDocument[]; problems: LocatedProblem[] } {
  const documents: InputDocument[] = [];
  const problems: LocatedProblem[] = [];
  const fail = (file: string, document: number, message: string) =>
    problems.push({ file, document, kind: '', name: '', path: '', message, severity: 'error' });
  for (const file of files) {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      fail(file, 0, code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory, not a YAML file' : `cannot read: ${(err as Error).message}`);
      continue;
    }
    parseAllDocuments(text).forEach((doc, i) => {
      const index = i + 1;
      if (doc.errors.length > 0) {
        fail(file, index, `is not valid YAML: ${doc.errors[0].message.split('\n')[0].replace(/:$/, '')}`);
        return;
      }
      const value = doc.toJSON();
      if (value === null || value === undefined) return;
      if (!isObject(value)) {
        fail(file, index, 'is not a Kubernetes object (a mapping with apiVersion and kind)');
        return;
      }
      documents.push({ file, document: index, manifest: value });
    });
  }
  return { documents, problems };
}

/** `apiVersion/kind` of every object `rayshift validate` understands. */
export const KNOWN_KINDS: readonly string[] = [
  'ray.io/v1/RayService',
  'rayshift.dev/v1alpha1/RayService',
  'gateway.networking.k8s.io/v1/GatewayClass',
  'gateway.networking.k8s.io/v1/Gateway',
  'gateway.networking.k8s.io/v1/HTTPRoute',
  'gateway.networking.k8s.io/v1/GRPCRoute',
  'workloads.x-k8s.io/v1alpha1/RoleBasedGroup',
  'workloads.x-k8s.io/v1alpha2/RoleBasedGroup',
  'workloads.x-k8s.io/v1alpha2/CoordinatedPolicy',
];

/** The identity of a document: kind and name (empty strings when missing). */
export function identity(doc: InputDocument): { kind: string; name: string; namespace: string } {
  const meta = asObject(doc.manifest.metadata);
  return {
    kind: typeof doc.manifest.kind === 'string' ? doc.manifest.kind : '',
    name: typeof meta.name === 'string' ? meta.name : '',
    namespace: typeof meta.namespace === 'string' ? meta.namespace : '',
  };
}

/** Finds the RoleBasedGroup a CoordinatedPolicy binds to (same name and namespace) among the documents. */
export function groupOfPolicy(policy: InputDocument, documents: readonly InputDocument[]): InputDocument | undefined {
  const p = identity(policy);
  return documents.find((d) => {
    const g = identity(d);
    return g.kind === 'RoleBasedGroup' && g.name === p.name && g.namespace === p.namespace;
  });
}

/** API groups rayshift owns or validates; an unknown kind or version in one of them is a typo. */
export const KNOWN_GROUPS: readonly string[] = ['ray.io', 'rayshift.dev', 'gateway.networking.k8s.io', 'workloads.x-k8s.io'];

/** Whether a document belongs to another API group (a Namespace, a Deployment, a CRD…), which rayshift leaves alone. */
export function isForeign(doc: InputDocument): boolean {
  const apiVersion = String(doc.manifest.apiVersion ?? '');
  return apiVersion !== '' && !KNOWN_GROUPS.includes(apiVersion.includes('/') ? apiVersion.split('/')[0] : '');
}

/**
 * Validates every document of rayshift's API groups with the model's validators. An unknown kind
 * or version in those groups, or a document without apiVersion, is an error naming the kinds
 * rayshift knows (a typo must not pass silently); documents of other groups are skipped.
 */
export function validateDocuments(documents: readonly InputDocument[]): LocatedProblem[] {
  const out: LocatedProblem[] = [];
  for (const doc of documents.filter((d) => !isForeign(d))) {
    const { kind, name } = identity(doc);
    const key = `${String(doc.manifest.apiVersion)}/${kind}`;
    let result: ValidationResult;
    switch (key) {
      case 'ray.io/v1/RayService':
      case 'rayshift.dev/v1alpha1/RayService':
        result = validateRayService(doc.manifest);
        break;
      case 'gateway.networking.k8s.io/v1/GatewayClass':
        result = validateGatewayClass(doc.manifest);
        break;
      case 'gateway.networking.k8s.io/v1/Gateway':
        result = validateGateway(doc.manifest);
        break;
      case 'gateway.networking.k8s.io/v1/HTTPRoute':
      case 'gateway.networking.k8s.io/v1/GRPCRoute':
        result = validateRoute(doc.manifest);
        break;
      case 'workloads.x-k8s.io/v1alpha1/RoleBasedGroup':
      case 'workloads.x-k8s.io/v1alpha2/RoleBasedGroup':
        result = validateRoleBasedGroup(doc.manifest);
        break;
      case 'workloads.x-k8s.io/v1alpha2/CoordinatedPolicy':
        result = validateCoordinatedPolicy(doc.manifest, groupOfPolicy(doc, documents)?.manifest);
        break;
      default:
        result = {
          errors: [{ path: 'kind', message: `${key} is not a kind rayshift validates; known: ${KNOWN_KINDS.join(', ')}`, severity: 'error' }],
          warnings: [],
        };
    }
    for (const p of [...result.errors, ...result.warnings]) out.push({ ...p, file: doc.file, document: doc.document, kind, name });
  }
  return out;
}
