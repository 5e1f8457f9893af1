/**
 * `KubeClient`: typed operations on any resource type (built-in or CRD) of a Kubernetes API server —
 * get, list (selectors, pagination), server-side apply (field manager `rayshift`), status subresource
 * writes, JSON patch (RFC 6902, with `test` ops), merge patch, optimistic-concurrency update, create,
 * delete with propagation policy — plus raw watch streams and informers (`watch()`).
 *
 * Configuration and credentials come from `@kubernetes/client-node`'s `KubeConfig` (kubeconfig file,
 * in-cluster ServiceAccount, or the default lookup); see `transport.ts` for the wire.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { loadClientNode } from './client-node';
import { KubeApiError, isNotFound } from './errors';
import { Informer, InformerHandler, InformerOptions } from './informer';
import { SERVICE_ACCOUNT_DIR, inClusterKubeConfig } from './kubeconfig-lookup';
import { Reachability } from './reachability';
import { RestMapper } from './rest-mapper';
import { KubeConfigTransport, StreamHandle, Transport } from './transport';
import {
  ListOptions,
  ListAllOptions,
  WriteOptions,
  ApplyOptions,
  PatchOptions,
  DeleteOptions,
  JsonPatchOp,
  RawWatchEvent,
  WatchStreamOptions,
  selectorString,
  type KubeClientOptions,
} from './request-options';
import {
  ALL_NAMESPACES,
  KubeList,
  KubeObject,
  ResolvedResource,
  ResourceType,
  collectionPath,
  objectPath,
  query,
} from './types';

/** The field manager rayshift writes with. */
export const FIELD_MANAGER = 'rayshift';

/** A client of one API server with one identity. */
export class KubeClient {
  /** The namespace of the kubeconfig context (in-cluster: the pod's), or `default`. */
  readonly namespace: string;
  /** The field manager used for writes. */
  readonly fieldManager: string;
  /** Whether the API server answers this client's requests; informers wake when it comes back. */
  readonly reachability = new Reachability();
  readonly #transport: Transport;
  readonly #mapper = new RestMapper((path) => this.request('GET', path));

  /** A client over any `Transport` (tests; custom wiring). Prefer the static factories. */
  constructor(transport: Transport, opts: { namespace?: string; fieldManager?: string } = {}) {
    this.#transport = this.reachability.track(transport);
    this.namespace = opts.namespace || 'default';
    this.fieldManager = opts.fieldManager ?? FIELD_MANAGER;
  }

  /** A client from a kubeconfig file (token, client certificate, exec and OIDC users are supported). */
  static fromKubeconfig(path: string, opts: KubeClientOptions = {}): KubeClient {
    const { KubeConfig } = loadClientNode();
    const kc = new KubeConfig();
    kc.loadFromFile(path);
    return KubeClient.fromKubeConfig(kc, opts);
  }

  /**
   * A client from the pod's ServiceAccount: server from `KUBERNETES_SERVICE_HOST`/`_PORT`, CA, token and
   * namespace from the mounted folder (default `/var/run/secrets/kubernetes.io/serviceaccount`). The
   * token file is re-read every minute, so kubelet's rotation is picked up.
   */
  static inCluster(opts: KubeClientOptions & { serviceAccountDir?: string } = {}): KubeClient {
    const kc = inClusterKubeConfig(opts.serviceAccountDir ?? SERVICE_ACCOUNT_DIR);
    return KubeClient.fromKubeConfig(kc, opts);
  }

  /** A client from `$KUBECONFIG`, else `~/.kube/config`, else the in-cluster ServiceAccount (client-node's default lookup). */
  static fromDefault(opts: KubeClientOptions = {}): KubeClient {
    const { KubeConfig } = loadClientNode();
    const kc = new KubeConfig();
    kc.loadFromDefault();
    return KubeClient.fromKubeConfig(kc, opts);
  }

  /** A client from an already loaded client-node `KubeConfig`. */
  static fromKubeConfig(kc: KubeConfig, opts: KubeClientOptions = {}): KubeClient {
    if (opts.context) kc.setCurrentContext(opts.context);
    const ctx = kc.getContextObject(kc.getCurrentContext());
    if (!ctx) throw new Error(`kubeconfig has no context ${JSON.stringify(kc.getCurrentContext())}`);
    const transport = new KubeConfigTransport(kc, { requestTimeoutMs: opts.requestTimeoutMs });
    return new KubeClient(transport, { namespace: ctx.namespace?.trim(), fieldManager: opts.fieldManager });
  }

  /** The API server URL. */
  get server(): string {
    return this.#transport.server;
  }

  /** Never prints credentials when the client is logged or inspected. */
  toJSON(): Record<string, unknown> {
    return { server: this.server, namespace: this.namespace, fieldManager: this.fieldManager };
  }

  /** Releases pooled connections (informers should be stopped first). */
  close(): void {
    this.#transport.close();
  }

  // --- REST mapping ------------------------------------------------------------------------------

  /**
   * The REST mapping of a resource type (see `RestMapper`). Throws `UnknownKindError` when the server
   * does not serve the kind.
   */
  resolve(type: ResourceType): Promise<ResolvedResource> {
    return this.#mapper.resolve(type);
  }

  // --- raw -----------------------------------------------------------------------------------------

  /**
   * One request; returns the parsed JSON body (or undefined for an empty body). Throws `KubeApiError`
   * for HTTP >= 400 and `KubeConnectionError` for network failures.
   */
  async request<T = unknown>(method: string, path: string, opts: { body?: unknown; contentType?: string; timeoutMs?: number } = {}): Promise<T> {
    const body = opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    const res = await this.#transport.request({ method, path, body, contentType: opts.contentType, timeoutMs: opts.timeoutMs });
    const parsed = parseBody(res.text, res.headers['content-type']);
    if (res.status >= 400 || res.status < 200) throw KubeApiError.fromResponse(method, path, res.status, parsed);
    return parsed as T;
  }

  // --- reads ---------------------------------------------------------------------------------------

  /** Reads one object; throws `KubeApiError` 404 when it does not exist. */
  async get<T extends KubeObject = KubeObject>(type: ResourceType, name: string, namespace?: string): Promise<T> {
    const r = await this.resolve(type);
    return this.request<T>('GET', objectPath(r, name, namespace));
  }

  /** Reads one object, or undefined when it does not exist. */
  async tryGet<T extends KubeObject = KubeObject>(type: ResourceType, name: string, namespace?: string): Promise<T | undefined> {
    try {
      return await this.get<T>(type, name, namespace);
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  }

  /** Lists one page (all of it unless `limit` is set); items get `apiVersion` and `kind`. */
  async list<T extends KubeObject = KubeObject>(type: ResourceType, opts: ListOptions = {}): Promise<KubeList<T>> {
    const r = await this.resolve(type);
    const q = query({
      labelSelector: selectorString(opts.labelSelector),
      fieldSelector: opts.fieldSelector,
      limit: opts.limit,
      continue: opts.continue,
    });
    const body = await this.request<{ metadata?: { resourceVersion?: string; continue?: string; remainingItemCount?: number }; items?: T[] }>(
      'GET',
      collectionPath(r, nsParam(opts.namespace)) + q,
    );
    const items = (body.items ?? []).map((o) => ({ ...o, apiVersion: r.apiVersion, kind: r.kind }) as T);
    const out: KubeList<T> = { items, resourceVersion: body.metadata?.resourceVersion ?? '' };
    if (body.metadata?.continue) out.continue = body.metadata.continue;
    if (body.metadata?.remainingItemCount !== undefined) out.remainingItemCount = body.metadata.remainingItemCount;
    return out;
  }

  /**
   * Lists every page (consistent snapshot: all pages share the first page's resourceVersion). When a
   * continue token expires (410) the list starts over, up to 3 times.
   */
  async listAll<T extends KubeObject = KubeObject>(type: ResourceType, opts: ListAllOptions = {}): Promise<KubeList<T>> {
    const pageSize = opts.pageSize ?? 500;
    for (let restart = 0; ; restart++) {
      const items: T[] = [];
      let token: string | undefined;
      let rv = '';
      try {
        do {
          const page = await this.list<T>(type, { ...opts, limit: pageSize, continue: token });
          items.push(...page.items);
          token = page.continue;
          rv = page.resourceVersion;
        } while (token);
        return { items, resourceVersion: rv };
      } catch (e) {
        if (e instanceof KubeApiError && e.isGone && token && restart < 3) continue;
        throw e;
      }
    }
  }

  // --- writes --------------------------------------------------------------------------------------

  /** Creates `obj` (POST); 409 `AlreadyExists` when the name is taken. */
  async create<T extends KubeObject = KubeObject>(obj: KubeObject, opts: WriteOptions = {}): Promise<T> {
    const r = await this.resolve(obj);
    const path = collectionPath(r, r.namespaced ? requireNamespace(obj, r) : undefined);
    return this.request<T>('POST', path + this.#writeQuery(opts), { body: obj });
  }

  /**
   * Replaces `obj` (PUT) guarded by `metadata.resourceVersion`: a stale version fails with 409 `Conflict`
   * (wrap in `retryOnConflict` with a fresh read). Status changes are ignored by the server for kinds
   * with a status subresource; use `updateStatus`.
   */
  async update<T extends KubeObject = KubeObject>(obj: T, opts: WriteOptions = {}): Promise<T> {
    return this.#put(obj, undefined, opts);
  }

  /**
   * Replaces the status subresource of `obj` (PUT `/status`) guarded by `metadata.resourceVersion`. The
   * caller sets `status.observedGeneration` and `status.conditions` (see `setCondition`).
   */
  async updateStatus<T extends KubeObject = KubeObject>(obj: T, opts: WriteOptions = {}): Promise<T> {
    return this.#put(obj, 'status', opts);
  }

  async #put<T extends KubeObject>(obj: T, subresource: string | undefined, opts: WriteOptions): Promise<T> {
    const r = await this.resolve(obj);
    if (!obj.metadata?.resourceVersion) {
      throw new Error(`update of ${r.kind} ${obj.metadata?.name}: metadata.resourceVersion is required (optimistic concurrency); read the object first`);
    }
    const path = objectPath(r, obj.metadata.name ?? '', requireNamespace(obj, r), subresource);
    return this.request<T>('PUT', path + this.#writeQuery(opts), { body: obj });
  }

  /**
   * Server-side apply (PATCH `application/apply-patch+yaml`) with the field manager `rayshift`: creates
   * the object or updates the fields this manager sets; fields it stops setting are removed if only it
   * owned them. Send only the fields rayshift owns. `force` takes fields from other managers instead of
   * failing with 409. `metadata.managedFields` is dropped from `obj`; a `metadata.resourceVersion` makes
   * the apply conditional. The server tracks Apply and Update (create/update/patch) by the same manager
   * name as two different managers: applying fields that `update`/`patchJson` wrote before conflicts
   * unless forced, so use one write style per field.
   */
  async apply<T extends KubeObject = KubeObject>(obj: KubeObject, opts: ApplyOptions = {}): Promise<T> {
    return this.#apply<T>(obj, undefined, opts);
  }

  /** Server-side apply of `obj.status` to the status subresource (same field manager). */
  async applyStatus<T extends KubeObject = KubeObject>(obj: KubeObject, opts: ApplyOptions = {}): Promise<T> {
    return this.#apply<T>(obj, 'status', opts);
  }

  async #apply<T extends KubeObject>(obj: KubeObject, subresource: string | undefined, opts: ApplyOptions): Promise<T> {
    const r = await this.resolve(obj);
    const { managedFields: _drop, ...metadata } = obj.metadata ?? {};
    void _drop;
    const body = { ...obj, metadata };
    const path = objectPath(r, metadata.name ?? '', requireNamespace(obj, r), subresource);
    const q = query({
      fieldManager: opts.fieldManager ?? this.fieldManager,
      force: opts.force ? 'true' : undefined,
      dryRun: opts.dryRun ? 'All' : undefined,
    });
    return this.request<T>('PATCH', path + q, { body, contentType: 'application/apply-patch+yaml' });
  }

  /**
   * RFC 6902 JSON patch (PATCH `application/json-patch+json`). The operations apply atomically: a
   * failing `test` op rejects the whole patch (HTTP 422 `Invalid`) and nothing changes. Use
   * `{op: 'test', path: '/metadata/resourceVersion', value}` for a version guard.
   */
  async patchJson<T extends KubeObject = KubeObject>(
    type: ResourceType,
    name: string,
    namespace: string | undefined,
    ops: readonly JsonPatchOp[],
    opts: PatchOptions = {},
  ): Promise<T> {
    const r = await this.resolve(type);
    const path = objectPath(r, name, namespace, opts.subresource);
    return this.request<T>('PATCH', path + this.#writeQuery(opts), { body: ops, contentType: 'application/json-patch+json' });
  }

  /** RFC 7386 JSON merge patch (PATCH `application/merge-patch+json`); `null` removes a key. */
  async patchMerge<T extends KubeObject = KubeObject>(
    type: ResourceType,
    name: string,
    namespace: string | undefined,
    patch: Record<string, unknown>,
    opts: PatchOptions = {},
  ): Promise<T> {
    const r = await this.resolve(type);
    const path = objectPath(r, name, namespace, opts.subresource);
    return this.request<T>('PATCH', path + this.#writeQuery(opts), { body: patch, contentType: 'application/merge-patch+json' });
  }

  /**
   * Deletes an object. Returns true when the server accepted the deletion (the object may linger while
   * finalizers run), false when it did not exist and `ignoreNotFound` is set.
   */
  async delete(type: ResourceType, name: string, namespace: string | undefined, opts: DeleteOptions = {}): Promise<boolean> {
    const r = await this.resolve(type);
    const body: Record<string, unknown> = { apiVersion: 'v1', kind: 'DeleteOptions' };
    if (opts.propagationPolicy) body.propagationPolicy = opts.propagationPolicy;
    if (opts.gracePeriodSeconds !== undefined) body.gracePeriodSeconds = opts.gracePeriodSeconds;
    if (opts.preconditions) body.preconditions = opts.preconditions;
    if (opts.dryRun) body.dryRun = ['All'];
    try {
      await this.request('DELETE', objectPath(r, name, namespace), { body });
      return true;
    } catch (e) {
      if (opts.ignoreNotFound && isNotFound(e)) return false;
      throw e;
    }
  }

  #writeQuery(opts: WriteOptions): string {
    return query({ fieldManager: opts.fieldManager ?? this.fieldManager, dryRun: opts.dryRun ? 'All' : undefined });
  }

  // --- watches -------------------------------------------------------------------------------------

  /**
   * Opens one watch request and calls `onEvent` for each event until the server ends it (timeout,
   * shutdown), the connection fails (`done` rejects) or `abort()` is called. A non-2xx answer (410 for
   * a too-old resourceVersion, 403, ...) throws `KubeApiError`. Informers build on this.
   */
  async watchStream<T extends KubeObject = KubeObject>(
    type: ResourceType,
    opts: WatchStreamOptions,
    onEvent: (e: RawWatchEvent<T>) => void,
  ): Promise<StreamHandle> {
    const r = await this.resolve(type);
    const timeoutSeconds = opts.timeoutSeconds ?? 300;
    const path =
      collectionPath(r, nsParam(opts.namespace)) +
      query({
        watch: 'true',
        resourceVersion: opts.resourceVersion,
        allowWatchBookmarks: opts.allowWatchBookmarks === false ? undefined : 'true',
        timeoutSeconds,
        labelSelector: selectorString(opts.labelSelector),
        fieldSelector: opts.fieldSelector,
      });
    const handle = await this.#transport.stream(
      { method: 'GET', path, timeoutMs: opts.idleTimeoutMs ?? (timeoutSeconds + 60) * 1000 },
      (line) => {
        const ev = JSON.parse(line) as RawWatchEvent<T>;
        if (ev.object && ev.type !== 'ERROR' && ev.type !== 'BOOKMARK') {
          // Watch events of a CRD carry apiVersion/kind already; core kinds too. Fill them if absent.
          ev.object.apiVersion ??= r.apiVersion;
          ev.object.kind ??= r.kind;
        }
        onEvent(ev);
      },
    );
    if (handle.status < 200 || handle.status >= 300) {
      throw KubeApiError.fromResponse('GET', path, handle.status, parseBody(handle.text ?? '', 'application/json'));
    }
    return handle;
  }

  /**
   * Starts an informer: lists `type` in `namespace` (or `ALL_NAMESPACES`), then watches from the list's
   * resourceVersion, keeping a local cache and calling `handler` for add/update/delete (see `Informer`).
   */
  watch<T extends KubeObject = KubeObject>(
    type: ResourceType,
    namespace: string,
    handler?: InformerHandler<T>,
    opts: InformerOptions = {},
  ): Informer<T> {
    return new Informer<T>(this, type, namespace, handler, opts).start();
  }
}

function nsParam(namespace: string | undefined): string | undefined {
  return !namespace || namespace === ALL_NAMESPACES ? undefined : namespace;
}

function requireNamespace(obj: KubeObject, r: ResolvedResource): string | undefined {
  if (!r.namespaced) return undefined;
  const ns = obj.metadata?.namespace;
  if (!ns) throw new Error(`${r.kind} ${obj.metadata?.name ?? obj.metadata?.generateName ?? ''}: metadata.namespace is required (the kind is namespaced)`);
  return ns;
}

function parseBody(text: string, contentType: string | string[] | undefined): unknown {
  if (!text) return undefined;
  const ct = String(contentType ?? '');
  if (/json/.test(ct) || /^\s*[{[]/.test(text)) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}
