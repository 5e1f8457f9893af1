/**
 * What an informer delivers and takes: its events and handler, its options and its counters.
 */
import type { LabelSelector } from './request-options';
import type { BackoffOptions } from './retry';
import type { KubeObject } from './types';

/** What happened to an object. */
export type InformerEventType = 'add' | 'update' | 'delete';

/** One event delivered to an informer's handler. */
export interface InformerEvent<T extends KubeObject = KubeObject> {
  readonly type: InformerEventType;
  /** The new object (for `delete`, the last state known). */
  readonly object: T;
  /** The previous cached object, for `update` and `delete`. */
  readonly oldObject?: T;
  /** A periodic re-emission of a cached object (nothing changed). */
  readonly resync?: boolean;
  /** Derived from a relist diff rather than a watch event (for `delete`: the final state is unknown). */
  readonly relist?: boolean;
}

/** Receives informer events; may be async (awaited before the next event). */
export type InformerHandler<T extends KubeObject = KubeObject> = (event: InformerEvent<T>) => void | Promise<void>;

/** A pino-compatible logger (`logger.warn({err}, 'msg')`). */
export interface KubeLogger {
  debug(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** Options of an informer. */
export interface InformerOptions {
  readonly labelSelector?: LabelSelector;
  readonly fieldSelector?: string;
  /** Re-emit every cached object this often (ms); 0 disables; default 300 000 (5 min). */
  readonly resyncIntervalMs?: number;
  /** Also relist from the server this often (ms), diffing against the cache; 0 (default) disables. */
  readonly relistIntervalMs?: number;
  /** Page size of lists; default 500. */
  readonly pageSize?: number;
  /** Server-side timeout of each watch request (s); default random in [300, 600) like client-go. */
  readonly watchTimeoutSeconds?: number;
  /** Abort a watch when nothing (not even a bookmark) arrives for this long (ms); default timeout + 60 s. */
  readonly idleTimeoutMs?: number;
  /** Backoff after failed lists/watches; default 500 ms doubling to 30 s, ±20 % jitter. */
  readonly backoff?: BackoffOptions;
  /** Called with list/watch errors (the informer retries them) and handler errors. */
  readonly onError?: (err: unknown, context: 'list' | 'watch' | 'handler') => void;
  /** Debug/warn logging of reconnects and relists. */
  readonly logger?: KubeLogger;
}

/** Counters, for health checks, metrics and tests. */
export interface InformerStats {
  /** Completed full lists (initial, after 410, periodic). */
  lists: number;
  /** Watch requests opened. */
  watches: number;
  /** 410 Gone answers (each followed by a relist). */
  expired: number;
  /** Bookmarks received. */
  bookmarks: number;
  /** List/watch failures (each followed by a backoff). */
  errors: number;
  /** Watch and list events applied to the cache. */
  events: number;
  /** Date.now() of the last byte of progress (event, bookmark, list). */
  lastActivity: number;
}
