/**
 * An informer: list, then watch from the list's resourceVersion, with a local cache.
 *
 * - Every watch asks for bookmarks, so the resourceVersion to resume from stays fresh even when
 *   nothing of this type changes.
 * - A closed watch (server timeout, API server restart, network failure) resumes from the last seen
 *   resourceVersion; failures back off exponentially (default 0.5 s → 30 s, jittered), and a backoff
 *   ends early when the client's first request after a network failure is answered (`Reachability`):
 *   after an API server restart, every informer resumes as soon as the server serves again.
 * - A 410 Gone (HTTP status, or an `ERROR` event with code 410: resourceVersion compacted or older
 *   than the restarted server's watch cache) relists. A relist is diffed against the cache, so only
 *   real changes are reported: objects whose resourceVersion did not change produce no event.
 * - Every `resyncIntervalMs` (default 5 min) each cached object is re-emitted as an `update` with
 *   `resync: true`, the safety net of level-triggered reconcilers.
 * - Events reach the handler one at a time, in order; an async handler is awaited before the next
 *   event. The cache is updated as events arrive, so a handler reading the cache sees the newest state.
 *   Handler errors go to `onError` and do not stop the informer.
 *
 * Cached objects are shared: do not mutate them.
 */
import type { KubeClient } from './client';
import type { RawWatchEvent } from './request-options';
import { KubeApiError, asStatus } from './errors';
import { BackoffOptions, backoffDelay } from './retry';
import type { StreamHandle } from './transport';
import type { InformerEvent, InformerHandler, InformerOptions, InformerStats } from './informer-options';
import { ALL_NAMESPACES, KubeObject, ResourceType, objectKey } from './types';
import { CacheIndex, hasLabels } from './cache-index';

// The shapes callers name, beside the informer that uses them.
export type { InformerEventType, InformerEvent, InformerHandler, KubeLogger, InformerOptions, InformerStats } from './informer-options';

const DEFAULT_BACKOFF: BackoffOptions = { initialMs: 500, factor: 2, maxMs: 30_000, jitter: 0.2 };

/** A list+watch cache of one resource type in one namespace (or all). Create with `KubeClient.watch`. */
export class Informer<T extends KubeObject = KubeObject> {
  /** Counters (see `InformerStats`). */
  readonly stats: InformerStats = { lists: 0, watches: 0, expired: 0, bookmarks: 0, errors: 0, events: 0, lastActivity: 0 };
  readonly #client: KubeClient;
  readonly #type: ResourceType;
  readonly #namespace: string;
  readonly #handler?: InformerHandler<T>;
  readonly #opts: InformerOptions;
  #cache = new Map<string, T>();
  readonly #index = new CacheIndex();
  #rv: string | undefined;
  #synced = false;
  #syncWaiters: Array<() => void> = [];
  #started = false;
  #stopped = false;
  #loop?: Promise<void>;
  #stream?: StreamHandle;
  #wake?: () => void;
  #chain: Promise<void> = Promise.resolve();
  #resyncTimer?: NodeJS.Timeout;
  #relistTimer?: NodeJS.Timeout;
  #relistDue = false;
  #lastError: unknown;

  /** Prefer `KubeClient.watch`. */
  constructor(client: KubeClient, type: ResourceType, namespace: string, handler?: InformerHandler<T>, opts: InformerOptions = {}) {
    this.#client = client;
    this.#type = type;
    this.#namespace = namespace;
    this.#handler = handler;
    this.#opts = opts;
  }

  /** Starts listing and watching (idempotent); returns this. */
  start(): this {
    if (this.#started || this.#stopped) return this;
    this.#started = true;
    this.#loop = this.#run();
    const resync = this.#opts.resyncIntervalMs ?? 300_000;
    if (resync > 0) {
      this.#resyncTimer = setInterval(() => this.#resync(), resync);
      this.#resyncTimer.unref();
    }
    const relist = this.#opts.relistIntervalMs ?? 0;
    if (relist > 0) {
      this.#relistTimer = setInterval(() => {
        this.#relistDue = true;
        this.#stream?.abort();
      }, relist);
      this.#relistTimer.unref();
    }
    return this;
  }

  /** Stops watching, drops undelivered events and waits for the running handler call to finish. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    clearInterval(this.#resyncTimer);
    clearInterval(this.#relistTimer);
    this.#stream?.abort();
    this.#wake?.();
    for (const w of this.#syncWaiters.splice(0)) w();
    await this.#loop;
    await this.#chain;
  }

  /** True once the first list has filled the cache. */
  hasSynced(): boolean {
    return this.#synced;
  }

  /** Resolves when the first list has filled the cache; rejects after `timeoutMs` or when stopped first. */
  waitForSync(timeoutMs?: number): Promise<void> {
    if (this.#synced) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const done = () => {
        clearTimeout(timer);
        if (this.#synced) resolve();
        else reject(new Error(`informer for ${this.#type.kind} stopped before its cache synced`));
      };
      this.#syncWaiters.push(done);
      if (timeoutMs !== undefined) {
        timer = setTimeout(() => {
          this.#syncWaiters = this.#syncWaiters.filter((w) => w !== done);
          const err = this.#lastError ? `; last error: ${(this.#lastError as Error).message ?? String(this.#lastError)}` : '';
          reject(new Error(`informer for ${this.#type.kind} did not sync within ${timeoutMs} ms${err}`));
        }, timeoutMs);
      }
    });
  }

  /** Resolves when every event emitted so far has been handled. */
  idle(): Promise<void> {
    return this.#chain;
  }

  /** The cached object, if any (namespace needed for namespaced kinds). */
  get(name: string, namespace?: string): T | undefined {
    return this.#cache.get(namespace ? `${namespace}/${name}` : name);
  }

  /** The cached objects, optionally of one namespace and carrying every label of `labels` (indexed: `CacheIndex`). */
  list(namespace?: string, labels?: Readonly<Record<string, string>>): T[] {
    if (!namespace) {
      const all = [...this.#cache.values()];
      return labels ? all.filter((o) => hasLabels(o, labels)) : all;
    }
    const out: T[] = [];
    for (const k of this.#index.candidates(namespace, labels)) {
      const o = this.#cache.get(k);
      if (o && (!labels || hasLabels(o, labels))) out.push(o);
    }
    return out;
  }

  /** Number of cached objects. */
  get size(): number {
    return this.#cache.size;
  }

  /** The resourceVersion the next watch resumes from. */
  get resourceVersion(): string | undefined {
    return this.#rv;
  }

  // --- the loop ----------------------------------------------------------------------------------

  async #run(): Promise<void> {
    let failures = 0;
    let needList = true;
    while (!this.#stopped) {
      if (needList || this.#relistDue) {
        this.#relistDue = false;
        try {
          await this.#relist();
          needList = false;
          failures = 0;
        } catch (e) {
          if (this.#stopped) break;
          failures++;
          this.#fail(e, 'list', failures);
          await this.#sleep(backoffDelay(failures, this.#opts.backoff ?? DEFAULT_BACKOFF));
          continue;
        }
      }
      if (this.#stopped) break;
      const started = Date.now();
      const before = this.stats.events + this.stats.bookmarks;
      let outcome: 'closed' | 'expired';
      try {
        outcome = await this.#watchOnce();
      } catch (e) {
        if (this.#stopped) break;
        if (e instanceof KubeApiError && e.isGone) {
          outcome = 'expired';
        } else {
          failures++;
          this.#fail(e, 'watch', failures);
          await this.#sleep(backoffDelay(failures, this.#opts.backoff ?? DEFAULT_BACKOFF));
          continue;
        }
      }
      if (this.#stopped) break;
      if (outcome === 'expired') {
        this.stats.expired++;
        this.#opts.logger?.debug({ kind: this.#type.kind, resourceVersion: this.#rv }, 'watch resourceVersion expired (410); relisting');
        needList = true;
        continue;
      }
      // Closed by the server. Resume at once if the watch did something; else (closed right away, e.g. a
      // server shutting down) back off so that we do not spin.
      if (this.stats.events + this.stats.bookmarks > before || Date.now() - started >= 1_000 || this.#relistDue) {
        failures = 0;
      } else {
        failures++;
        await this.#sleep(backoffDelay(failures, this.#opts.backoff ?? DEFAULT_BACKOFF));
      }
    }
  }

  async #relist(): Promise<void> {
    const list = await this.#client.listAll<T>(this.#type, {
      namespace: this.#namespace === ALL_NAMESPACES ? undefined : this.#namespace,
      labelSelector: this.#opts.labelSelector,
      fieldSelector: this.#opts.fieldSelector,
      pageSize: this.#opts.pageSize,
    });
    if (this.#stopped) return;
    const fresh = new Map<string, T>();
    const events: InformerEvent<T>[] = [];
    for (const o of list.items) {
      const k = objectKey(o);
      fresh.set(k, o);
      const old = this.#cache.get(k);
      if (!old) events.push({ type: 'add', object: o, ...(this.#synced ? { relist: true } : {}) });
      else if (old.metadata.resourceVersion !== o.metadata.resourceVersion) events.push({ type: 'update', object: o, oldObject: old, relist: true });
    }
    for (const [k, old] of this.#cache) {
      if (!fresh.has(k)) events.push({ type: 'delete', object: old, oldObject: old, relist: true });
    }
    this.#cache = fresh;
    this.#index.clear();
    for (const [k, o] of fresh) this.#index.add(k, o);
    this.#rv = list.resourceVersion;
    this.stats.lists++;
    this.stats.events += events.length;
    this.stats.lastActivity = Date.now();
    for (const ev of events) this.#emit(ev);
    if (!this.#synced) {
      this.#synced = true;
      for (const w of this.#syncWaiters.splice(0)) w();
    }
  }

  async #watchOnce(): Promise<'closed' | 'expired'> {
    let expired = false;
    let errorEvent: KubeApiError | undefined;
    const timeoutSeconds = this.#opts.watchTimeoutSeconds ?? 300 + Math.floor(Math.random() * 300);
    this.stats.watches++;
    const handle = await this.#client.watchStream<T>(
      this.#type,
      {
        namespace: this.#namespace === ALL_NAMESPACES ? undefined : this.#namespace,
        resourceVersion: this.#rv,
        allowWatchBookmarks: true,
        timeoutSeconds,
        idleTimeoutMs: this.#opts.idleTimeoutMs,
        labelSelector: this.#opts.labelSelector,
        fieldSelector: this.#opts.fieldSelector,
      },
      (ev) => {
        if (this.#stopped || expired || errorEvent) return;
        this.stats.lastActivity = Date.now();
        if (ev.type === 'ERROR') {
          const st = asStatus(ev.object);
          const err = KubeApiError.fromResponse('WATCH', `${this.#type.apiVersion}/${this.#type.kind}`, st?.code ?? 500, ev.object);
          if (err.isGone) expired = true;
          else errorEvent = err;
          this.#stream?.abort();
          return;
        }
        this.#apply(ev);
      },
    );
    this.#stream = handle;
    if (this.#stopped || this.#relistDue || expired || errorEvent) handle.abort();
    try {
      await handle.done;
    } finally {
      this.#stream = undefined;
    }
    if (expired) return 'expired';
    if (errorEvent) throw errorEvent;
    return 'closed';
  }

  #apply(ev: RawWatchEvent<T>): void {
    const rv = ev.object?.metadata?.resourceVersion;
    if (ev.type === 'BOOKMARK') {
      if (rv) this.#rv = rv;
      this.stats.bookmarks++;
      return;
    }
    const obj = ev.object;
    const k = objectKey(obj);
    const old = this.#cache.get(k);
    this.stats.events++;
    if (ev.type === 'DELETED') {
      if (rv) this.#rv = rv;
      if (!old) return;
      this.#cache.delete(k);
      this.#index.remove(k, old);
      this.#emit({ type: 'delete', object: obj, oldObject: old });
      return;
    }
    // ADDED or MODIFIED.
    if (rv) this.#rv = rv;
    if (old && old.metadata.resourceVersion === rv) return; // already known: never report it again
    this.#cache.set(k, obj);
    if (old) this.#index.remove(k, old);
    this.#index.add(k, obj);
    this.#emit(old ? { type: 'update', object: obj, oldObject: old } : { type: 'add', object: obj });
  }

  #resync(): void {
    if (!this.#synced || this.#stopped) return;
    for (const o of this.#cache.values()) this.#emit({ type: 'update', object: o, oldObject: o, resync: true });
  }

  #emit(ev: InformerEvent<T>): void {
    const h = this.#handler;
    if (!h) return;
    this.#chain = this.#chain.then(async () => {
      if (this.#stopped) return;
      try {
        await h(ev);
      } catch (e) {
        this.#opts.onError?.(e, 'handler');
        this.#opts.logger?.warn({ err: e, kind: this.#type.kind, event: ev.type }, 'informer handler failed');
      }
    });
  }

  #fail(e: unknown, context: 'list' | 'watch', failures: number): void {
    this.stats.errors++;
    this.#lastError = e;
    this.#opts.onError?.(e, context);
    this.#opts.logger?.warn({ err: e, kind: this.#type.kind, failures }, `informer ${context} failed; retrying`);
  }

  /** Sleeps `ms`, or less: `stop()` and the client's first 2xx answer after a network failure wake it. */
  #sleep(ms: number): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const t = setTimeout(() => this.#wake?.(), ms);
      const cancelRestored = this.#client.reachability.onceRestored(() => this.#wake?.());
      this.#wake = () => {
        clearTimeout(t);
        cancelRestored();
        this.#wake = undefined;
        resolve();
      };
    });
  }
}
