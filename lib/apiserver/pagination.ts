/**
 * Page tokens: `page_size`/`page_token` mapped onto Kubernetes `limit`/`continue`. A token holds the
 * Kubernetes continue token and, for cross-namespace lists made namespace by namespace, the
 * namespace to resume in, sealed with AES-256-GCM under a key this process draws at start: the
 * caller learns nothing from it (not the name of a namespace they may not list) and cannot forge or
 * alter one, and it is bound to the caller and the query (kind, namespace, label selector) it was
 * issued for. A token that does not open (forged, altered, another caller's or query's, or issued
 * before the server restarted) is INVALID_ARGUMENT; an expired continue token (410) surfaces as
 * FAILED_PRECONDITION through `toConnectError`.
 */
import * as crypto from 'node:crypto';
import { Code, ConnectError } from '@connectrpc/connect';
import type { KubeClient } from '../runtime/kube/client';
import type { ListOptions } from '../runtime/kube/request-options';
import { KubeApiError } from '../runtime/kube/errors';
import { KnownTypes, type KubeList, type KubeObject, type ResourceType } from '../runtime/kube/types';

/** Where the next page starts. */
export interface PageCursor {
  /** Kubernetes continue token. */
  readonly c?: string;
  /** Namespace the next page starts in (namespace-by-namespace lists only). */
  readonly ns?: string;
}

/** Tokens of this process: a restarted server refuses the old ones (the caller starts again). */
const TOKEN_KEY = crypto.randomBytes(32);
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** What a token is bound to: the caller, the kind, the namespace (`*` across namespaces) and the label selector. */
function bindingOf(req: PageRequest, type: ResourceType, namespace: string | undefined): Buffer {
  return Buffer.from(JSON.stringify([req.caller ?? '', type.apiVersion, type.kind, namespace ?? '*', req.labelSelector ?? '']));
}

/** The page token of `cursor` for this request ('' for none). */
export function sealPageToken(cursor: PageCursor | undefined, req: PageRequest, type: ResourceType, namespace?: string): string {
  if (!cursor) return '';
  const iv = crypto.randomBytes(IV_BYTES);
  const cipher = crypto.createCipheriv('aes-256-gcm', TOKEN_KEY, iv);
  cipher.setAAD(bindingOf(req, type, namespace));
  const sealed = Buffer.concat([cipher.update(JSON.stringify(cursor), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, sealed, cipher.getAuthTag()]).toString('base64url');
}

/** The cursor of the request's token ('' → the first page); INVALID_ARGUMENT unless this process issued it for this caller and query. */
function openPageToken(req: PageRequest, type: ResourceType, namespace?: string): PageCursor {
  if (!req.pageToken) return {};
  const refused = new ConnectError('page_token is not a token this server issued for this caller and query; start again from the first page', Code.InvalidArgument);
  const raw = Buffer.from(req.pageToken, 'base64url');
  if (raw.length < IV_BYTES + TAG_BYTES + 2 || raw.length > 8 * 1024) throw refused;
  let parsed: unknown;
  try {
    const decipher = crypto.createDecipheriv('aes-256-gcm', TOKEN_KEY, raw.subarray(0, IV_BYTES));
    decipher.setAAD(bindingOf(req, type, namespace));
    decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
    parsed = JSON.parse(Buffer.concat([decipher.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES)), decipher.final()]).toString('utf8'));
  } catch {
    throw refused;
  }
  const { c, ns } = parsed as PageCursor;
  // Only this module seals tokens, so this holds; checked anyway because the fields reach Kubernetes queries.
  if (typeof parsed !== 'object' || parsed === null || (c !== undefined && typeof c !== 'string') || (ns !== undefined && typeof ns !== 'string')) throw refused;
  return { ...(c !== undefined ? { c } : {}), ...(ns !== undefined ? { ns } : {}) };
}

/** A page of objects and the token of the next one. */
export interface Page<T extends KubeObject = KubeObject> {
  readonly items: T[];
  readonly nextPageToken: string;
}

/** What to list. */
export interface PageRequest {
  readonly pageSize: number;
  readonly pageToken: string;
  readonly labelSelector?: string;
  /** The caller's user name: a token is honoured only for the caller it was issued to. */
  readonly caller?: string;
}

/** The page request of a list request made by `caller`, to whom its tokens are bound. */
export function pageRequest(req: PageRequest, caller: { readonly username: string }): PageRequest {
  return { pageSize: req.pageSize, pageToken: req.pageToken, labelSelector: req.labelSelector, caller: caller.username };
}

/**
 * The largest page, and the page of `page_size` 0: one call reads and holds at most this many
 * objects. Larger sizes are served as this one (AIP-158 lets a server lower a page size).
 */
export const MAX_PAGE_SIZE = 500;

/**
 * The most namespaces one cross-namespace page lists for a caller who may not list cluster-wide:
 * each is one impersonated request, so this bounds a call's cost whatever the number of namespaces;
 * the page may then come back short (even empty) with a token that resumes at the next namespace.
 */
export const NAMESPACES_PER_PAGE = 32;

/** How many of those namespace lists run at once: enough to hide latency, few enough to spare kube-apiserver. */
const NAMESPACE_CONCURRENCY = 8;

/** The Kubernetes `limit` of `pageSize`; negative (or fractional) sizes are INVALID_ARGUMENT. */
function limitOf(pageSize: number): number {
  if (!Number.isInteger(pageSize) || pageSize < 0) {
    throw new ConnectError(`page_size must be between 0 and ${MAX_PAGE_SIZE} (0: ${MAX_PAGE_SIZE}; larger sizes are served as ${MAX_PAGE_SIZE}); got ${pageSize}`, Code.InvalidArgument);
  }
  return pageSize === 0 ? MAX_PAGE_SIZE : Math.min(pageSize, MAX_PAGE_SIZE);
}

/** One page of `type` in `namespace`, read by `kube`. */
export async function listNamespacePage<T extends KubeObject>(kube: KubeClient, type: ResourceType, namespace: string, req: PageRequest): Promise<Page<T>> {
  const limit = limitOf(req.pageSize);
  const page = await kube.list<T>(type, { namespace, limit, continue: openPageToken(req, type, namespace).c, labelSelector: req.labelSelector || undefined });
  return { items: page.items, nextPageToken: sealPageToken(page.continue ? { c: page.continue } : undefined, req, type, namespace) };
}

/**
 * One page of `type` across namespaces: a cluster-wide list (one request) when the caller may make
 * it, else namespace by namespace (names listed with `namespaces`, the server's client), skipping
 * those where the caller may not list, so the result holds exactly what the caller may see, in
 * namespace order. That way costs at most `NAMESPACES_PER_PAGE` requests per call.
 */
export async function listAllNamespacesPage<T extends KubeObject>(kube: KubeClient, namespaces: KubeClient, type: ResourceType, req: PageRequest): Promise<Page<T>> {
  const limit = limitOf(req.pageSize);
  const cursor = openPageToken(req, type);
  const encode = (next: PageCursor | undefined) => sealPageToken(next, req, type);
  const labelSelector = req.labelSelector || undefined;
  if (cursor.ns === undefined) {
    try {
      const page = await kube.list<T>(type, { limit, continue: cursor.c, labelSelector });
      return { items: page.items, nextPageToken: encode(page.continue ? { c: page.continue } : undefined) };
    } catch (e) {
      if (!(e instanceof KubeApiError && e.isForbidden) || cursor.c !== undefined) throw e;
    }
  }
  const names = (await namespaces.listAll(KnownTypes.Namespace)).items.map((n) => String(n.metadata.name)).sort();
  // A namespace deleted since the token was issued: resume at the next one, without its continue token.
  let i = cursor.ns === undefined ? 0 : names.findIndex((n) => n >= cursor.ns!);
  if (i < 0) i = names.length;
  let cont = cursor.ns !== undefined && names[i] === cursor.ns ? cursor.c : undefined;
  const items: T[] = [];
  let budget = NAMESPACES_PER_PAGE;
  while (i < names.length && budget > 0 && items.length < limit) {
    const batch = names.slice(i, i + Math.min(NAMESPACE_CONCURRENCY, budget));
    budget -= batch.length;
    const room = limit - items.length;
    const pages = await Promise.all(batch.map((namespace, k) => listIfAllowed<T>(kube, type, { namespace, limit: room, continue: k === 0 ? cont : undefined, labelSelector })));
    cont = undefined;
    for (const [k, page] of pages.entries()) {
      // A later namespace's page was read with the room left before the earlier ones filled it:
      // when it no longer fits, it is read again from its start on the next call.
      if (page && page.items.length > limit - items.length) return { items, nextPageToken: encode({ ns: batch[k] }) };
      if (page) items.push(...page.items);
      if (page?.continue) return { items, nextPageToken: encode({ ns: batch[k], c: page.continue }) };
      i++;
    }
  }
  return { items, nextPageToken: i < names.length ? encode({ ns: names[i] }) : '' };
}

/** A page of `type` as `kube` lists it, or undefined when the caller may not list there. */
async function listIfAllowed<T extends KubeObject>(kube: KubeClient, type: ResourceType, opts: ListOptions): Promise<KubeList<T> | undefined> {
  try {
    return await kube.list<T>(type, opts);
  } catch (e) {
    if (e instanceof KubeApiError && e.isForbidden) return undefined;
    throw e;
  }
}
