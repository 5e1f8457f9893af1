/**
 * TEST-ONLY fake of the Kubernetes port of the RayService reconciler (`RayServiceKube`): an
 * in-memory object store that gives every write a new resourceVersion, bumps `generation` when a
 * spec changes, answers 404 for missing objects, 409 for a taken name or a stale resourceVersion,
 * 422 for a failed JSON patch `test` op, and records each write in order. Faults can be queued for
 * the next write of a verb and kind. No API server, no network.
 */
import { JsonPatchOp } from '../../../lib/runtime/route/types';
import { KubeApiError } from '../../../lib/runtime/kube/errors';
import { applyTestJsonPatch } from '../../support/json-patch';
import { ApplyOptions, DeleteOptions, ListOptions, PatchOptions } from '../../../lib/runtime/kube/request-options';
import { KubeList, KubeObject, ResourceType } from '../../../lib/runtime/kube/types';
import { RayServiceKube } from '../../../lib/runtime/rayservice/ports';

/** A write verb of the port. */
export type FakeVerb = 'create' | 'apply' | 'applyStatus' | 'patchJson' | 'patchMerge' | 'delete';

/** One write the fake received, in order: the object (create, apply), the status, the patch, or nothing (delete). */
export interface FakeWrite {
  readonly verb: FakeVerb;
  readonly kind: string;
  readonly name: string;
  readonly body?: unknown;
}

type TypeRef = Pick<ResourceType, 'apiVersion' | 'kind'>;

function key(t: TypeRef, namespace: string | undefined, name: string): string {
  return `${t.apiVersion}/${t.kind}/${namespace ?? ''}/${name}`;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** RFC 7386 merge of `patch` into `target` (`null` removes a key). */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isRecord(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = isRecord(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** See the file comment. */
export class FakeKube implements RayServiceKube {
  /** Every write, in the order it was made (refused writes included, so a retry shows twice). */
  readonly writes: FakeWrite[] = [];
  private readonly objects = new Map<string, KubeObject>();
  private readonly hooks: { verb: FakeVerb; kind: string; run: () => void }[] = [];
  private rv = 100;
  private uids = 0;

  /** Stores `obj` as if created by someone else (not recorded as a write); returns it as stored. */
  seed(obj: KubeObject): KubeObject {
    return this.store({ ...obj, metadata: { uid: `uid-${++this.uids}`, generation: 1, ...obj.metadata } });
  }

  /** The stored object (a copy), or undefined. */
  peek(type: TypeRef, name: string, namespace: string): KubeObject | undefined {
    const o = this.objects.get(key(type, namespace, name));
    return o && structuredClone(o);
  }

  /** The stored objects of a type in `namespace` (copies). */
  listNow(type: TypeRef, namespace: string): KubeObject[] {
    const prefix = key(type, namespace, '');
    return [...this.objects.entries()].filter(([k]) => k.startsWith(prefix)).map(([, o]) => structuredClone(o));
  }

  /** Changes a stored object as another writer would (a controller's status, a user's spec): not recorded. */
  mutate(type: TypeRef, name: string, namespace: string, change: (o: KubeObject) => KubeObject): KubeObject {
    const current = this.objects.get(key(type, namespace, name));
    if (!current) throw new Error(`fake: no ${type.kind} ${namespace}/${name}`);
    return this.store(change(structuredClone(current)), current);
  }

  /** The next write of `verb` on `kind` fails with HTTP `statusCode` (`reason` as the API server would say). */
  failNext(verb: FakeVerb, kind: string, statusCode: number, reason: string): void {
    this.beforeNext(verb, kind, () => {
      throw new KubeApiError({ statusCode, reason, method: verb, path: `fake/${kind}` });
    });
  }

  /** Runs `run` just before the next write of `verb` on `kind` is applied (another writer racing it). */
  beforeNext(verb: FakeVerb, kind: string, run: () => void): void {
    this.hooks.push({ verb, kind, run });
  }

  /** The writes made since `from` (an index into `writes`), as `verb Kind/name`. */
  writeLog(from = 0): string[] {
    return this.writes.slice(from).map((w) => `${w.verb} ${w.kind}/${w.name}`);
  }

  async get<T extends KubeObject = KubeObject>(type: ResourceType, name: string, namespace?: string): Promise<T> {
    const o = this.objects.get(key(type, namespace, name));
    if (!o) throw this.notFound('get', type, name);
    return structuredClone(o) as T;
  }

  async tryGet<T extends KubeObject = KubeObject>(type: ResourceType, name: string, namespace?: string): Promise<T | undefined> {
    const o = this.objects.get(key(type, namespace, name));
    return o && (structuredClone(o) as T);
  }

  /** Without a namespace, every namespace's objects (as the API server lists a namespaced type); of field selectors only `spec.nodeName!=` (bound Pods). */
  async list<T extends KubeObject = KubeObject>(type: ResourceType, opts: ListOptions = {}): Promise<KubeList<T>> {
    const selector = opts.labelSelector ?? {};
    if (typeof selector === 'string') throw new Error('fake: string label selectors are not supported');
    if (opts.fieldSelector !== undefined && opts.fieldSelector !== 'spec.nodeName!=') throw new Error(`fake: field selector ${opts.fieldSelector} is not supported`);
    const bound = (o: KubeObject) => opts.fieldSelector === undefined || Boolean((o.spec as { nodeName?: string } | undefined)?.nodeName);
    const prefix = opts.namespace === undefined ? `${type.apiVersion}/${type.kind}/` : `${type.apiVersion}/${type.kind}/${opts.namespace}/`;
    const items = [...this.objects.entries()]
      .filter(([k, o]) => k.startsWith(prefix) && bound(o) && Object.entries(selector).every(([l, v]) => o.metadata.labels?.[l] === v))
      .map(([, o]) => structuredClone(o) as T);
    return { items, resourceVersion: String(this.rv) };
  }

  async create<T extends KubeObject = KubeObject>(obj: KubeObject): Promise<T> {
    this.record('create', obj, structuredClone(obj));
    if (this.objects.has(key(obj, obj.metadata.namespace, String(obj.metadata.name)))) throw this.error('create', obj, 409, 'AlreadyExists');
    return this.seed(obj) as T;
  }

  async apply<T extends KubeObject = KubeObject>(obj: KubeObject, _opts: ApplyOptions = {}): Promise<T> {
    this.record('apply', obj, structuredClone(obj));
    const current = this.objects.get(key(obj, obj.metadata.namespace, String(obj.metadata.name)));
    if (!current) return this.seed(obj) as T;
    this.checkVersion(obj, current);
    return this.store({ ...current, ...obj, metadata: { ...current.metadata, ...obj.metadata, resourceVersion: current.metadata.resourceVersion } }, current) as T;
  }

  async applyStatus<T extends KubeObject = KubeObject>(obj: KubeObject, _opts: ApplyOptions = {}): Promise<T> {
    const name = String(obj.metadata.name);
    this.record('applyStatus', obj, structuredClone(obj.status));
    const current = this.objects.get(key(obj, obj.metadata.namespace, name));
    if (!current) throw this.notFound('applyStatus', obj, name);
    this.checkVersion(obj, current);
    return this.store({ ...current, status: structuredClone(obj.status) }, current) as T;
  }

  async patchJson<T extends KubeObject = KubeObject>(type: ResourceType, name: string, namespace: string | undefined, ops: readonly JsonPatchOp[]): Promise<T> {
    this.record('patchJson', { ...type, metadata: { name } }, structuredClone(ops));
    const current = this.objects.get(key(type, namespace, name));
    if (!current) throw this.notFound('patchJson', type, name);
    let patched: KubeObject;
    try {
      patched = applyTestJsonPatch(current, ops);
    } catch (err) {
      // kube-apiserver answers a failed `test` op (or a missing path) with 422 and no causes.
      throw this.error('patchJson', type, 422, 'Invalid', (err as Error).message);
    }
    return this.store(patched, current) as T;
  }

  async patchMerge<T extends KubeObject = KubeObject>(type: ResourceType, name: string, namespace: string | undefined, patch: Record<string, unknown>, opts: PatchOptions = {}): Promise<T> {
    this.record('patchMerge', { ...type, metadata: { name } }, structuredClone(patch));
    const current = this.objects.get(key(type, namespace, name));
    if (!current) throw this.notFound('patchMerge', type, name);
    const body = opts.subresource === 'status' ? { status: patch.status } : patch;
    return this.store(mergePatch(current, body) as KubeObject, current) as T;
  }

  async delete(type: ResourceType, name: string, namespace: string | undefined, opts: DeleteOptions = {}): Promise<boolean> {
    this.record('delete', { ...type, metadata: { name } });
    const k = key(type, namespace, name);
    if (this.objects.delete(k)) return true;
    if (opts.ignoreNotFound) return false;
    throw this.notFound('delete', type, name);
  }

  /** Records a write and runs the hook queued for it, if any (which may throw the write's fault). */
  private record(verb: FakeVerb, obj: TypeRef & { metadata: { name?: string } }, body?: unknown): void {
    this.writes.push({ verb, kind: obj.kind, name: String(obj.metadata.name), ...(body !== undefined ? { body } : {}) });
    const i = this.hooks.findIndex((h) => h.verb === verb && h.kind === obj.kind);
    if (i >= 0) this.hooks.splice(i, 1)[0].run();
  }

  /** A write naming a resourceVersion other than the stored one is a 409 Conflict. */
  private checkVersion(obj: KubeObject, current: KubeObject): void {
    const rv = obj.metadata.resourceVersion;
    if (rv !== undefined && rv !== current.metadata.resourceVersion) throw this.error('write', obj, 409, 'Conflict', 'the object has been modified');
  }

  /** Stores `next` under a new resourceVersion; the generation moves when the spec did. */
  private store(next: KubeObject, previous?: KubeObject): KubeObject {
    const specChanged = previous !== undefined && JSON.stringify(previous.spec) !== JSON.stringify(next.spec);
    const generation = (previous?.metadata.generation ?? next.metadata.generation ?? 1) + (specChanged ? 1 : 0);
    const stored = structuredClone({ ...next, metadata: { ...next.metadata, generation, resourceVersion: String(++this.rv) } });
    this.objects.set(key(stored, stored.metadata.namespace, String(stored.metadata.name)), stored);
    return structuredClone(stored);
  }

  private notFound(method: string, type: TypeRef, name: string): KubeApiError {
    return this.error(method, type, 404, 'NotFound', `${type.kind} ${name} not found`);
  }

  private error(method: string, type: TypeRef, statusCode: number, reason: string, message?: string): KubeApiError {
    return new KubeApiError({ statusCode, reason, method, path: `fake/${type.kind}`, ...(message !== undefined ? { message } : {}) });
  }
}
