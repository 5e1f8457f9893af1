/**
 * Page tokens: `page_size`/`page_token` mapped onto Kubernetes `limit`/`continue`. A token is
 * opaque base64url JSON holding the Kubernetes continue token and, for cross-namespace lists made
 * namespace by namespace, the namespace to resume in. An expired continue token (410) surfaces as
 * FAILED_PRECONDITION through `toConnectError`; a token that does not parse is INVALID_ARGUMENT.
 */
import { Code, ConnectError } from '@connectrpc/connect';
import type { KubeClient } from '../runtime/kube/client';
import { KubeApiError } from '../runtime/kube/errors';
import { KnownTypes, type KubeObject, type ResourceType } from '../runtime/kube/types';

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

function checkSize(pageSize: number): number | undefined {
  if (pageSize < 0) throw new ConnectError('page_size must be ≥ 0', Code.InvalidArgument);
  return pageSize === 0 ? undefined : pageSize;
}

/** One page of `type` in `namespace`, read by `kube`. */
export async function listNamespacePage<T extends KubeObject>(kube: KubeClient, type: ResourceType, namespace: string, req: PageRequest): Promise<Page<T>> {
  const limit = checkSize(req.pageSize);
  const page = await kube.list<T>(type, { namespace, limit, continue: decode(req.pageToken).c, labelSelector: req.labelSelector || undefined });
  return { items: page.items, nextPageToken: encode(page.continue ? { c: page.continue } : undefined) };
}

/**
 * One page of `type` across namespaces: a cluster-wide list when the caller may make it, else the
 * namespaces (listed with `namespaces`, the server's client) one by one, skipping those where the
 * caller may not list, so the result holds exactly what the caller may see.
 */
export async function listAllNamespacesPage<T extends KubeObject>(kube: KubeClient, namespaces: KubeClient, type: ResourceType, req: PageRequest): Promise<Page<T>> {
  const limit = checkSize(req.pageSize);
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
  const items: T[] = [];
  let start = cursor.ns === undefined ? 0 : names.indexOf(cursor.ns);
  if (start < 0) start = names.findIndex((n) => n > String(cursor.ns));
  let cont = cursor.ns === undefined ? undefined : cursor.c;
  for (let i = start; i >= 0 && i < names.length; i++) {
    if (limit !== undefined && items.length >= limit) return { items, nextPageToken: encode({ ns: names[i] }) };
    try {
      const page = await kube.list<T>(type, { namespace: names[i], limit: limit === undefined ? undefined : limit - items.length, continue: cont, labelSelector });
      items.push(...page.items);
      if (page.continue) return { items, nextPageToken: encode({ ns: names[i], c: page.continue }) };
    } catch (e) {
      if (!(e instanceof KubeApiError && e.isForbidden)) throw e;
    }
    cont = undefined;
  }
  return { items, nextPageToken: '' };
}
