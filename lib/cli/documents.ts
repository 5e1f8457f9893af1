/**
 * The input of `rayshift validate` and `rayshift plan`: the YAML documents of files (or of standard
 * input, the file `-`), what each one is, and every problem of them as one list, file problems
 * included, so that one unreadable file never hides the report on the others.
 */
import * as fs from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { rbgPlanInputs } from '../engine/from-spec';
import { exceedsSkew, smallestAchievableSkewPercent } from '../engine/rbg-bound';
import { readCoordination, type CoordinationReading } from '../engine/rbg-executor-rules';
import { Problem, ProblemList, ValidationResult, show } from '../spec/problem';
import { JsonObject, asArray, asObject, isObject } from '../spec/read';
import { validateRayService } from '../spec/rayservice';
import { COORDINATION_ANNOTATION, EXECUTOR_LABEL, RBG_EXECUTORS, validateCoordinatedPolicy, validateRoleBasedGroup } from '../spec/rbg';
import { annotationRoleProblems } from '../spec/rbg-executor';
import { validateRoleBasedGroupWarmup } from '../spec/rbg-warmup';
import type { RbgRelease } from '../spec/rbg-releases';
import { validateGateway, validateGatewayClass, validateRoute } from '../spec/gateway';
import { checkPinnedSchema, withoutRuledPaths } from '../spec/pinned-schemas';

/** The file argument `-` means standard input, which problems name `<stdin>`. */
const fileName = (arg: string) => (arg === '-' ? '<stdin>' : arg);

/** One YAML document of an input file. */
export interface InputDocument {
  /** The file it came from (`<stdin>` for standard input). */
  readonly file: string;
  /** 1-based index of the document in its file. */
  readonly document: number;
  /** Its content. */
  readonly manifest: JsonObject;
}

/** A problem located in an input file, as `rayshift validate --json` prints it. */
export interface LocatedProblem extends Problem {
  /** The file (`<stdin>` for standard input). */
  readonly file: string;
  /** 1-based document index, 0 when the problem is with the file itself. */
  readonly document: number;
  /** The object's kind, or "" when unknown. */
  readonly kind: string;
  /** The object's name, or "" when unknown. */
  readonly name: string;
}

/** The documents of the input files and every problem found in them. */
export interface CheckedInput {
  /** Every document that is a mapping, in file order. */
  readonly documents: InputDocument[];
  /** Problems of files, of documents that could not be read, and of the objects. */
  readonly problems: LocatedProblem[];
}

/** What the files are checked for beyond the rules every target shares. */
export interface CheckOptions {
  /** The RBG release RoleBasedGroups are for (`--rbg-version`): adds its rules and deprecations. @default none */
  readonly rbgVersion?: RbgRelease;
}

/**
 * Reads, parses and validates every document of every file (`-` reads `readStdin()`): a missing
 * or unreadable file, a document that is not YAML, an unknown kind or version in rayshift's API
 * groups and a file with nothing rayshift validates are problems too.
 */
export function checkFiles(files: readonly string[], readStdin: () => string, options: CheckOptions = {}): CheckedInput {
  const read = readDocuments(files, readStdin);
  const { documents, defaulted, problems: structural } = storeDocuments(read.documents, options);
  const ruled = validateDocuments(defaulted, options);
  const problems = [...read.problems, ...withoutRuledPaths(structural, ruled, (p) => `${p.file}\0${p.document}\0${p.path}`), ...ruled];
  problems.push(...checkCoordinationTargets(documents));
  for (const file of new Set(files.map(fileName))) {
    if (problems.some((p) => p.file === file && p.severity === 'error')) continue;
    const own = documents.filter((d) => d.file === file);
    if (own.some((d) => !isForeign(d))) continue;
    const found = [...new Set(own.map((d) => `${String(d.manifest.apiVersion ?? '')}/${identity(d).kind}`))];
    const message = found.length === 0 ? 'holds no Kubernetes object: nothing was checked' : `holds no object rayshift validates (only ${found.join(', ')}): nothing was checked`;
    problems.push({ file, document: 0, kind: '', name: '', path: '', message, severity: 'warning' });
  }
  return { documents, problems };
}

function readDocuments(files: readonly string[], readStdin: () => string): CheckedInput {
  const documents: InputDocument[] = [];
  const problems: LocatedProblem[] = [];
  const fail = (file: string, document: number, message: string) =>
    problems.push({ file, document, kind: '', name: '', path: '', message, severity: 'error' });
  for (const arg of files) {
    const file = fileName(arg);
    let text: string;
    try {
      text = arg === '-' ? readStdin() : fs.readFileSync(arg, 'utf8');
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
      let value: unknown;
      try {
        value = doc.toJSON();
      } catch (err) {
        // An alias without its anchor, or aliases that expand beyond the parser's limit.
        fail(file, index, `is not valid YAML: ${(err as Error).message}`);
        return;
      }
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

/**
 * The documents as the API server would store them, and what it would refuse or drop: each object
 * of a kind with a pinned CRD is checked against that CRD's schema first (unknown fields, types,
 * enums, bounds, required fields), pruned and defaulted, so that the rules, and `plan`, read what
 * the cluster would hold (`lib/spec/pinned-schemas.ts`; `validateAsStored` is the same for one object).
 */
function storeDocuments(documents: readonly InputDocument[], options: CheckOptions): CheckedInput & { defaulted: InputDocument[] } {
  const problems: LocatedProblem[] = [];
  const stored: InputDocument[] = [];
  const defaulted: InputDocument[] = [];
  for (const doc of documents) {
    const check = isForeign(doc) ? undefined : checkPinnedSchema(doc.manifest, { rbgVersion: options.rbgVersion });
    if (check === undefined) {
      stored.push(doc);
      defaulted.push(doc);
      continue;
    }
    const { kind, name } = identity(doc);
    for (const p of check.problems) problems.push({ ...p, file: doc.file, document: doc.document, kind, name });
    stored.push({ ...doc, manifest: check.stored });
    // The rules read the defaulted object with its unknown fields, as `validateAsStored` does.
    defaulted.push({ ...doc, manifest: check.defaulted });
  }
  return { documents: stored, defaulted, problems };
}

/** `apiVersion/kind` of every object `rayshift validate` understands. */
const KNOWN_KINDS: readonly string[] = [
  'ray.io/v1/RayService',
  'rayshift.dev/v1alpha1/RayService',
  'gateway.networking.k8s.io/v1/GatewayClass',
  'gateway.networking.k8s.io/v1/Gateway',
  'gateway.networking.k8s.io/v1/HTTPRoute',
  'gateway.networking.k8s.io/v1/GRPCRoute',
  // v1beta1 is still served (Gateway API v1.6.1) with the same schema as v1, and upstream's examples use it.
  'gateway.networking.k8s.io/v1beta1/GatewayClass',
  'gateway.networking.k8s.io/v1beta1/Gateway',
  'gateway.networking.k8s.io/v1beta1/HTTPRoute',
  'workloads.x-k8s.io/v1alpha1/RoleBasedGroup',
  'workloads.x-k8s.io/v1alpha2/RoleBasedGroup',
  'workloads.x-k8s.io/v1alpha2/CoordinatedPolicy',
  'workloads.x-k8s.io/v1alpha2/RoleBasedGroupWarmup',
];

/** The apiVersions rayshift validates `kind` in (none for a kind it does not know). */
function knownVersionsOf(kind: string): string[] {
  return KNOWN_KINDS.filter((k) => k.endsWith(`/${kind}`)).map((k) => k.slice(0, -kind.length - 1));
}

/** The identity of a document: kind and name (empty strings when missing). */
export function identity(doc: InputDocument): { kind: string; name: string; namespace: string } {
  const meta = asObject(doc.manifest.metadata);
  return {
    kind: typeof doc.manifest.kind === 'string' ? doc.manifest.kind : '',
    name: typeof meta.name === 'string' ? meta.name : '',
    namespace: typeof meta.namespace === 'string' ? meta.namespace : '',
  };
}

/** The group among the documents a warmup targets (`targetRoleBasedGroup.name`, same namespace), as `validateRoleBasedGroupWarmup`'s option. */
function warmupGroup(warmup: InputDocument, documents: readonly InputDocument[]): { group?: unknown } {
  const w = identity(warmup);
  const target = asObject(asObject(warmup.manifest.spec).targetRoleBasedGroup).name;
  const group = documents.find((d) => identity(d).kind === 'RoleBasedGroup' && identity(d).name === target && identity(d).namespace === w.namespace);
  return group ? { group: group.manifest } : {};
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
const KNOWN_GROUPS: readonly string[] = ['ray.io', 'rayshift.dev', 'gateway.networking.k8s.io', 'workloads.x-k8s.io'];

/**
 * Kinds of rayshift's API groups that upstream defines but rayshift does not validate: they sit
 * beside rayshift's objects in the same repositories (a ReferenceGrant next to a route, a
 * ScalingAdapter next to a group), so they are skipped like a Deployment, not called typos.
 */
const UPSTREAM_KINDS_NOT_VALIDATED: Readonly<Record<string, readonly string[]>> = {
  'ray.io': ['RayCluster', 'RayJob', 'RayCronJob'],
  'gateway.networking.k8s.io': ['ReferenceGrant', 'BackendTLSPolicy', 'ListenerSet', 'TLSRoute', 'TCPRoute', 'UDPRoute', 'BackendLBPolicy'],
  'workloads.x-k8s.io': ['RoleBasedGroupSet', 'RoleBasedGroupScalingAdapter', 'ClusterEngineRuntimeProfile', 'InstanceSet', 'Instance', 'RoleInstanceSet', 'RoleInstance'],
};

/**
 * Whether rayshift leaves a document alone: another API group (a Namespace, a Deployment, a CRD…),
 * or a kind of its groups that upstream defines and rayshift does not validate.
 */
export function isForeign(doc: InputDocument): boolean {
  const apiVersion = String(doc.manifest.apiVersion ?? '');
  const group = apiVersion.includes('/') ? apiVersion.split('/')[0] : '';
  if (apiVersion !== '' && !KNOWN_GROUPS.includes(group)) return true;
  return (UPSTREAM_KINDS_NOT_VALIDATED[group] ?? []).includes(identity(doc).kind);
}

/**
 * The rules a rayshift executor (the operator, or Pulumi) reads from a RoleBasedGroup's
 * `rayshift.dev/coordination` annotation, read as the executor reads them; undefined without the
 * annotation.
 */
export function executorCoordination(group: InputDocument): CoordinationReading | undefined {
  const annotations = asObject(asObject(group.manifest.metadata).annotations);
  return annotations[COORDINATION_ANNOTATION] === undefined ? undefined : readCoordination(group.manifest);
}

/** The rayshift executors, which alone read the coordination annotation. */
const RAYSHIFT_EXECUTORS: readonly string[] = RBG_EXECUTORS.filter((e) => e !== 'rbg');

/**
 * Validates a RoleBasedGroup and, when it carries the coordination annotation, what its executor
 * would reject there, and an annotation that no executor reads (no rayshift executor label).
 */
function validateGroup(group: InputDocument, options: CheckOptions): ValidationResult {
  const problems = new ProblemList();
  problems.addAll(validateRoleBasedGroup(group.manifest, { rbgVersion: options.rbgVersion }));
  const reading = executorCoordination(group);
  if (reading === undefined) return problems.result();
  if (reading.problem !== undefined) problems.error('metadata.annotations', reading.problem);
  const executor = asObject(asObject(group.manifest.metadata).labels)[EXECUTOR_LABEL];
  if (typeof executor !== 'string' || !RAYSHIFT_EXECUTORS.includes(executor)) {
    const is = executor === undefined ? 'unset' : JSON.stringify(executor);
    problems.warning('metadata.labels', `annotation ${COORDINATION_ANNOTATION} is read only by a rayshift executor, but label ${EXECUTOR_LABEL} is ${is}, not ${RAYSHIFT_EXECUTORS.join(' or ')}: nothing enforces these rules`);
  }
  return problems.result();
}

/** The problem of a document whose apiVersion and kind rayshift does not validate, though the group is one of rayshift's. */
function unknownTypeProblem(apiVersion: string, kind: string): Problem {
  if (kind === '') return { path: 'kind', message: `is required; known: ${KNOWN_KINDS.join(', ')}`, severity: 'error' };
  const versions = knownVersionsOf(kind);
  if (apiVersion === '') return { path: 'apiVersion', message: `is required; ${versions.length > 0 ? `rayshift validates ${kind} in ${versions.join(', ')}` : `known: ${KNOWN_KINDS.join(', ')}`}`, severity: 'error' };
  if (versions.length > 0) return { path: 'apiVersion', message: `${apiVersion} is not a version of ${kind} rayshift validates; known: ${versions.join(', ')}`, severity: 'error' };
  return { path: 'kind', message: `${apiVersion}/${kind} is not a kind rayshift validates; known: ${KNOWN_KINDS.join(', ')}`, severity: 'error' };
}

/** The warning on a document of another API group whose kind rayshift validates elsewhere (a typo in the group, or another project's kind of that name). */
function foreignKnownKindProblem(apiVersion: string, kind: string): Problem | undefined {
  const versions = knownVersionsOf(kind);
  if (versions.length === 0) return undefined;
  return { path: 'apiVersion', message: `${apiVersion} is not an API group rayshift validates, so this ${kind} was not checked; rayshift validates ${kind} in ${versions.join(', ')}`, severity: 'warning' };
}

/**
 * Validates every document of rayshift's API groups with the model's validators. An unknown kind
 * or version in those groups, or a document without apiVersion, is an error naming what rayshift
 * knows (a typo must not pass silently); documents of other groups are skipped, with a warning
 * when their kind is one rayshift validates in its own groups.
 */
function validateDocuments(documents: readonly InputDocument[], options: CheckOptions): LocatedProblem[] {
  const out: LocatedProblem[] = [];
  for (const doc of documents) {
    const { kind, name } = identity(doc);
    const apiVersion = String(doc.manifest.apiVersion ?? '');
    let result: ValidationResult;
    if (isForeign(doc)) {
      const warning = foreignKnownKindProblem(apiVersion, kind);
      result = { errors: [], warnings: warning ? [warning] : [] };
    } else {
      result = validateKnown(doc, documents, apiVersion, kind, options);
    }
    for (const p of [...result.errors, ...result.warnings]) out.push({ ...p, file: doc.file, document: doc.document, kind, name });
  }
  return out;
}

function validateKnown(doc: InputDocument, documents: readonly InputDocument[], apiVersion: string, kind: string, options: CheckOptions): ValidationResult {
  switch (`${apiVersion}/${kind}`) {
    case 'ray.io/v1/RayService':
    case 'rayshift.dev/v1alpha1/RayService':
      return validateRayService(doc.manifest);
    case 'gateway.networking.k8s.io/v1/GatewayClass':
    case 'gateway.networking.k8s.io/v1beta1/GatewayClass':
      return validateGatewayClass(doc.manifest);
    case 'gateway.networking.k8s.io/v1/Gateway':
    case 'gateway.networking.k8s.io/v1beta1/Gateway':
      return validateGateway(doc.manifest);
    case 'gateway.networking.k8s.io/v1/HTTPRoute':
    case 'gateway.networking.k8s.io/v1beta1/HTTPRoute':
    case 'gateway.networking.k8s.io/v1/GRPCRoute':
      return validateRoute(doc.manifest);
    case 'workloads.x-k8s.io/v1alpha1/RoleBasedGroup':
    case 'workloads.x-k8s.io/v1alpha2/RoleBasedGroup':
      return validateGroup(doc, options);
    case 'workloads.x-k8s.io/v1alpha2/CoordinatedPolicy':
      return validateCoordinatedPolicy(doc.manifest, groupOfPolicy(doc, documents)?.manifest);
    case 'workloads.x-k8s.io/v1alpha2/RoleBasedGroupWarmup':
      return validateRoleBasedGroupWarmup(doc.manifest, { ...(options.rbgVersion ? { rbgVersion: options.rbgVersion } : {}), ...warmupGroup(doc, documents) });
    default:
      return { errors: [unknownTypeProblem(apiVersion, kind)], warnings: [] };
  }
}

/** The namespace as a message shows it. */
const ns = (namespace: string) => (namespace === '' ? '(unset)' : namespace);

/**
 * The checks across documents no single validator can make, each located on the document it is
 * about: a CoordinatedPolicy that binds no RoleBasedGroup of the files (warning), a
 * `rayshift.dev/coordination` rule naming a role its group lacks (error), and a rolling-update rule
 * whose maxSkew no rollout of its roles can keep (warning, with the engine's bound,
 * `smallestAchievableSkewPercent`).
 */
function checkCoordinationTargets(documents: readonly InputDocument[]): LocatedProblem[] {
  const out: LocatedProblem[] = [];
  const known = documents.filter((d) => !isForeign(d));
  const groups = known.filter((d) => identity(d).kind === 'RoleBasedGroup');
  const at = (doc: InputDocument, path: string, message: string, severity: 'error' | 'warning') => {
    const { kind, name } = identity(doc);
    out.push({ file: doc.file, document: doc.document, kind, name, path, message, severity });
  };
  for (const doc of known) {
    const { kind, name, namespace } = identity(doc);
    if (kind === 'CoordinatedPolicy' && groupOfPolicy(doc, documents) === undefined) {
      const existing = groups.map((g) => `${identity(g).name} (namespace ${ns(identity(g).namespace)})`);
      at(
        doc,
        'metadata.name',
        `${show(name)} names no RoleBasedGroup in namespace ${ns(namespace)} among the validated files (${existing.length > 0 ? `RoleBasedGroups: ${existing.join(', ')}` : 'they hold none'}): RBG applies a CoordinatedPolicy only to the group of the same name and namespace, so this one coordinates nothing there`,
        'warning',
      );
    }
    if (kind !== 'RoleBasedGroup') continue;
    const annotation = annotationSpec(doc);
    if (annotation) for (const p of annotationRoleProblems(doc.manifest, annotation).errors) at(doc, p.path, p.message, 'error');
    const policy = documents.find((d) => identity(d).kind === 'CoordinatedPolicy' && groupOfPolicy(d, documents) === doc);
    // Where each set of rules lives: the policy's, else the group's inline v1alpha1 rules, and the annotation's.
    const sources: { where: InputDocument; path: string; policy?: JsonObject; rules: unknown[] }[] = [
      policy
        ? { where: policy, path: 'spec.policies', policy: policy.manifest, rules: asArray(asObject(policy.manifest.spec).policies) }
        : { where: doc, path: 'spec.coordination', rules: asArray(asObject(doc.manifest.spec).coordination) },
    ];
    if (annotation) sources.push({ where: doc, path: `metadata.annotations["${COORDINATION_ANNOTATION}"].policies`, policy: { spec: annotation }, rules: asArray(annotation.policies) });
    for (const { where, path, policy: source, rules } of sources) {
      for (const input of rbgPlanInputs(doc.manifest, source)) {
        const bound = smallestAchievableSkewPercent(input.roles);
        if (!exceedsSkew(bound, input.maxSkewPercent)) continue;
        const index = rules.findIndex((r) => asObject(r).name === input.rule);
        const sizes = input.roles.map((r) => `${r.name} (${r.replicas} replicas${r.partition > 0 ? `, partition ${r.partition}` : ''})`).join(', ');
        at(
          where,
          `${path}[${index}].strategy.rollingUpdate.maxSkew`,
          `"${input.maxSkewPercent}%" cannot hold for roles ${sizes}: updating one replica at a time, no rollout keeps the skew below ${bound.toFixed(1)}%; \`rayshift plan\` shows the skew each round reaches`,
          'warning',
        );
      }
    }
  }
  return out;
}

/** The parsed coordination annotation of a group, when it is a JSON object (a text that is not is `validate`'s error already). */
function annotationSpec(group: InputDocument): JsonObject | undefined {
  const text = asObject(asObject(group.manifest.metadata).annotations)[COORDINATION_ANNOTATION];
  if (typeof text !== 'string') return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    return isObject(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}
