/**
 * Page tokens: `page_size`/`page_token` mapped onto Kubernetes `limit`/`continue`. A token is
 * opaque base64url JSON holding the Kubernetes continue token and, for cross-namespace lists made
 * namespace by namespace, the namespace to resume in. An expired continue token (410) surfaces as
 * FAILED_PRECONDITION through `toConnectError`; a token that does not parse is INVALID_ARGUMENT.
 */
import { Code, ConnectError } from '@connectrpc/connect';
import type { KubeClient } from '../runtime/kube/client';
import type { ListOptions } from '../runtime/kube/request-options';
import { KubeApiError } from '../runtime/kube/errors';
import { KnownTypes, type KubeList, type KubeObject, type ResourceType } from '../runtime/kube/types';

interface PageCursor {
  /** Kubernetes continue token. */
  readonly c?: string;
  /** Namespace the next page starts in (namespace-by-namespace lists only). */
  readonly ns?: string;
}

/** Encodes a cursor as a page token ('' for none). */
function encode(cursor: PageCursor | undefined): string {
  return cursor ? Buffer.from(JSON.stringify(cursor)).toString('base64url') : '';
}

/** Decodes a page token ('' → the first page). */
function decode(token: string): PageCursor {
  if (!token) return {};
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as unknown;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as PageCursor;
  } catch {
    // reported below
  }
  throw new ConnectError('page_token is not a token this server issued', Code.InvalidArgument);
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
  const page = await kube.list<T>(type, { namespace, limit, continue: decode(req.pageToken).c, labelSelector: req.labelSelector || undefined });
  return { items: page.items, nextPageToken: encode(page.continue ? { c: page.continue } : undefined) };
}

/**
 * One page of `type` across namespaces: a cluster-wide list (one request) when the caller may make
 * it, else namespace by namespace (names listed with `namespaces`, the server's client), skipping
 * those where the caller may not list, so the result holds exactly what the caller may see, in
 * namespace order. That way costs at most `NAMESPACES_PER_PAGE` requests per call.
 */
export async function listAllNamespacesPage<T extends KubeObject>(kube: KubeClient, namespaces: KubeClient, type: ResourceType, req: PageRequest): Promise<Page<T>> {
  const limit = limitOf(req.pageSize);
  const cursor = decode(req.pageToken);
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
  let i = cursor.ns === undefined ? 0 : names.findIndex((n) => n >= String(cursor.ns));
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
