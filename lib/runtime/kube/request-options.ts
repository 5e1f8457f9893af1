/**
 * What a `KubeClient` call takes: label selectors, list, write, apply, patch, delete and watch
 * options, JSON patch operations and raw watch events. Kept apart from the client so that callers
 * (informers, the API server's pagination, route and partition writers) name the shapes without
 * the client's implementation.
 */
import type { KubeObject } from './types';

/** A label selector: the string form (`app=x,tier!=db`) or equality pairs. */
export type LabelSelector = string | Readonly<Record<string, string>>;

/** Options of `KubeClient` factories. */
export interface KubeClientOptions {
  /** kubeconfig context to use instead of `current-context`. */
  readonly context?: string;
  /** Field manager for create/update/apply/patch; default `rayshift`. */
  readonly fieldManager?: string;
  /** Socket inactivity timeout of ordinary requests in ms; default 60 000. */
  readonly requestTimeoutMs?: number;
}

/** Options of `list`. */
export interface ListOptions {
  /** Namespace, or `ALL_NAMESPACES`/undefined for all (ignored for cluster-scoped kinds). */
  readonly namespace?: string;
  readonly labelSelector?: LabelSelector;
  readonly fieldSelector?: string;
  /** Page size (`limit`). */
  readonly limit?: number;
  /** Continue token from the previous page. */
  readonly continue?: string;
}

/** Options of `listAll`. */
export interface ListAllOptions {
  readonly namespace?: string;
  readonly labelSelector?: LabelSelector;
  readonly fieldSelector?: string;
  /** Page size; default 500. */
  readonly pageSize?: number;
}

/** Options shared by writes. */
export interface WriteOptions {
  /** Server-side dry run (`dryRun=All`): validated and admitted, not persisted. */
  readonly dryRun?: boolean;
  /** Field manager; default the client's (`rayshift`). */
  readonly fieldManager?: string;
}

/** Options of `apply` / `applyStatus`. */
export interface ApplyOptions extends WriteOptions {
  /** Take ownership of fields another manager owns instead of failing with 409 Conflict. */
  readonly force?: boolean;
}

/** Options of `patchJson` / `patchMerge`. */
export interface PatchOptions extends WriteOptions {
  /** Patch a subresource, e.g. `status`. */
  readonly subresource?: string;
}

/** Options of `delete`. */
export interface DeleteOptions {
  /** `Foreground`, `Background` (server default for most kinds) or `Orphan`. */
  readonly propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
  readonly gracePeriodSeconds?: number;
  /** Delete only if the object still has this uid / resourceVersion (409 otherwise). */
  readonly preconditions?: { readonly uid?: string; readonly resourceVersion?: string };
  readonly dryRun?: boolean;
  /** Return false instead of throwing when the object does not exist. */
  readonly ignoreNotFound?: boolean;
}

/** One RFC 6902 JSON patch operation: the subset rayshift emits (no `move`/`copy`). */
export type JsonPatchOp =
  | { readonly op: 'add' | 'replace' | 'test'; readonly path: string; readonly value: unknown }
  | { readonly op: 'remove'; readonly path: string };

/** A raw watch event as the API server sends it. */
export interface RawWatchEvent<T extends KubeObject = KubeObject> {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  /** The object (a `Status` for `ERROR`; only `metadata.resourceVersion` is meaningful for `BOOKMARK`). */
  readonly object: T;
}

/** Options of `watchStream`. */
export interface WatchStreamOptions {
  /** Namespace, or `ALL_NAMESPACES`/undefined for all. */
  readonly namespace?: string;
  /** Start after this resourceVersion (from a list or a previous event). */
  readonly resourceVersion?: string;
  readonly labelSelector?: LabelSelector;
  readonly fieldSelector?: string;
  /** Ask for BOOKMARK events; default true. */
  readonly allowWatchBookmarks?: boolean;
  /** Server-side watch timeout; default 300. */
  readonly timeoutSeconds?: number;
  /** Abort when nothing arrives for this long (ms); default `(timeoutSeconds + 60) * 1000`. */
  readonly idleTimeoutMs?: number;
}

/** The string form of a label selector. */
export function selectorString(sel: LabelSelector | undefined): string | undefined {
  if (sel === undefined) return undefined;
  if (typeof sel === 'string') return sel || undefined;
  const parts = Object.entries(sel).map(([k, v]) => `${k}=${v}`);
  return parts.length ? parts.join(',') : undefined;
}

