/**
 * The dashboard's only access to the rayshift core API: its REST transcoding (JSON mapping of the
 * proto messages, types generated from `proto/`) and the server-sent-event watch stream, called
 * with the viewer's own bearer token. Requests go to the page's own origin (`rayshift dashboard`
 * proxies them to the API server).
 */
import type { RayServiceEventJson, RayServiceJson, RoleBasedGroupJson, SteeringVerb, UpgradeEventJson, UpgradePlanJson, UpgradeStatusJson, WhoAmIResponseJson } from './api-types';
import { STEERING_VERBS } from './api-types';
import type { ListRayServiceEventsResponseJson, ListRayServicesResponseJson, SteeringAccessJson } from '../../lib/apiserver/gen/rayshift/v1/rayservice_service_pb';
import type { ListRoleBasedGroupsResponseJson } from '../../lib/apiserver/gen/rayshift/v1/rolebasedgroup_pb';
import { readEventStream } from './sse';
import { ApiError } from './api-error';

export * from './api-types';
export { ApiError } from './api-error';

const API = '/apis/rayshift/v1';
const TOKEN_KEY = 'rayshift.token';

/** The viewer's token, kept for the browser tab only (sessionStorage). */
export const tokenStore = {
  get(): string | undefined {
    return sessionStorage.getItem(TOKEN_KEY) ?? undefined;
  },
  set(token: string): void {
    sessionStorage.setItem(TOKEN_KEY, token.trim());
  },
  clear(): void {
    sessionStorage.removeItem(TOKEN_KEY);
  },
};

function headers(extra: Record<string, string> = {}): Record<string, string> {
  const token = tokenStore.get();
  return { accept: 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}), ...extra };
}

async function errorOf(res: Response): Promise<ApiError> {
  try {
    const body = (await res.json()) as { code?: number; message?: string };
    return new ApiError(res.status, body.code ?? 2, body.message ?? res.statusText);
  } catch {
    return new ApiError(res.status, 14, `HTTP ${res.status}`);
  }
}

async function call<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers: headers(body === undefined ? {} : { 'content-type': 'application/json' }),
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    });
  } catch (e) {
    if (signal?.aborted) throw e;
    throw new ApiError(0, 14, 'the API server is unreachable');
  }
  if (!res.ok) throw await errorOf(res);
  return (await res.json()) as T;
}

const servicePath = (namespace: string, name: string) => `${API}/namespaces/${encodeURIComponent(namespace)}/rayservices/${encodeURIComponent(name)}`;

/** The authenticated viewer. */
export function whoAmI(): Promise<WhoAmIResponseJson> {
  return call('GET', `${API}/whoami`);
}

/**
 * Every RayService the viewer may list, in every namespace: every page, since a viewer who may not
 * list cluster-wide is served a bounded number of namespaces per call (short or empty pages).
 */
export async function listAllRayServices(): Promise<RayServiceJson[]> {
  const all: RayServiceJson[] = [];
  let token = '';
  do {
    const page = await call<ListRayServicesResponseJson>('GET', `${API}/rayservices${token ? `?page_token=${encodeURIComponent(token)}` : ''}`);
    all.push(...(page.rayServices ?? []));
    token = page.nextPageToken ?? '';
  } while (token);
  return all;
}

/** One RayService (spec, annotations and upgrade status). */
export function getRayService(namespace: string, name: string): Promise<RayServiceJson> {
  return call('GET', servicePath(namespace, name));
}

/** The dry-run timeline of the service's stored spec. */
export function planRayService(namespace: string, name: string): Promise<UpgradePlanJson> {
  return call('POST', `${servicePath(namespace, name)}:plan`, {});
}

/** The Kubernetes events of a service and of its active and pending RayClusters, oldest first. */
export async function listRayServiceEvents(namespace: string, name: string): Promise<RayServiceEventJson[]> {
  return (await call<ListRayServiceEventsResponseJson>('GET', `${servicePath(namespace, name)}/events`)).events ?? [];
}

/** Applies a steering verb; resolves to the upgrade status right after it. */
export function steer(namespace: string, name: string, verb: SteeringVerb, reason: string): Promise<UpgradeStatusJson> {
  // The HTTP rules name each custom method after its verb in lowerCamelCase (`:retryAnalysis`).
  const method = verb.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
  return call('POST', `${servicePath(namespace, name)}:${method}`, { reason });
}

/** Which steering verbs the viewer may use on a service (the server's SubjectAccessReviews, one per verb). */
export async function steeringPermissions(namespace: string, name: string): Promise<Record<SteeringVerb, boolean>> {
  const access = await call<SteeringAccessJson>('GET', `${servicePath(namespace, name)}/steeringAccess`);
  const allowed = new Set(access.allowedVerbs ?? []);
  return Object.fromEntries(STEERING_VERBS.map((v) => [v, allowed.has(v)])) as Record<SteeringVerb, boolean>;
}

/** The RoleBasedGroups of a namespace. */
export async function listRoleBasedGroups(namespace: string): Promise<RoleBasedGroupJson[]> {
  return (await call<ListRoleBasedGroupsResponseJson>('GET', `${API}/namespaces/${encodeURIComponent(namespace)}/rolebasedgroups`)).roleBasedGroups ?? [];
}

/** One RoleBasedGroup with its coordination progress. */
export function getRoleBasedGroup(namespace: string, name: string): Promise<RoleBasedGroupJson> {
  return call('GET', `${API}/namespaces/${encodeURIComponent(namespace)}/rolebasedgroups/${encodeURIComponent(name)}`);
}

/** State of a watch connection, for the page to show. */
export type WatchState = 'connecting' | 'live' | 'reconnecting';

/** Callbacks of `watchUpgrade`. */
export interface WatchHandlers {
  /** Every event (snapshot, progress, heartbeat, completed, deleted). */
  onEvent(event: UpgradeEventJson): void;
  /** Connection state changes. */
  onState(state: WatchState, error?: ApiError): void;
}

/** Seconds between the server's heartbeats; a stream silent for three of them is re-opened. */
const HEARTBEAT_SECONDS = 5;
/** Longest wait between reconnection attempts, ms. */
const MAX_BACKOFF_MS = 4_000;

/**
 * Follows a RayService's upgrade over the REST watch (server-sent events read through `fetch`, which,
 * unlike `EventSource`, can send the bearer token). The server ends the stream when an upgrade it saw
 * completes; the watch then opens a new one, so it follows every later upgrade too. Broken or silent
 * streams are re-opened with a growing delay, resuming from the last resourceVersion seen.
 * Returns a function that stops watching.
 */
export function watchUpgrade(namespace: string, name: string, handlers: WatchHandlers): () => void {
  const stop = new AbortController();
  let resourceVersion = '';
  let failures = 0;
  let state: WatchState | undefined;
  const report = (next: WatchState, error?: ApiError) => {
    if (next === state && !error) return;
    state = next;
    handlers.onState(next, error);
  };
  const sleep = (ms: number) => new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    stop.signal.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });

  const once = async (): Promise<void> => {
    const attempt = new AbortController();
    const abort = () => attempt.abort();
    stop.signal.addEventListener('abort', abort);
    let silence: ReturnType<typeof setTimeout> | undefined;
    const alive = () => {
      clearTimeout(silence);
      silence = setTimeout(abort, HEARTBEAT_SECONDS * 3 * 1000);
    };
    try {
      const query = new URLSearchParams({ heartbeat_seconds: String(HEARTBEAT_SECONDS), ...(resourceVersion ? { resource_version: resourceVersion } : {}) });
      alive();
      let res: Response;
      try {
        res = await fetch(`${servicePath(namespace, name)}/upgrade:watch?${query}`, { headers: headers({ accept: 'text/event-stream' }), signal: attempt.signal });
      } catch {
        throw new ApiError(0, 14, 'the API server is unreachable');
      }
      if (!res.ok || !res.body) throw await errorOf(res);
      await readEventStream(
        res.body,
        (text) => {
          const event = JSON.parse(text) as UpgradeEventJson;
          if (event.status?.resourceVersion) resourceVersion = event.status.resourceVersion;
          failures = 0;
          report('live');
          handlers.onEvent(event);
        },
        alive,
      );
    } finally {
      clearTimeout(silence);
      stop.signal.removeEventListener('abort', abort);
    }
  };

  void (async () => {
    report('connecting');
    while (!stop.signal.aborted) {
      try {
        await once();
        // The server ended the stream (an upgrade completed): follow the next one.
      } catch (e) {
        if (stop.signal.aborted) return;
        failures++;
        const error = e instanceof ApiError ? e : new ApiError(0, 14, 'the watch stream broke');
        report('reconnecting', error);
        if (error.httpStatus === 404) resourceVersion = '';
        await sleep(Math.min(MAX_BACKOFF_MS, 250 * 2 ** failures));
      }
    }
  })();
  return () => stop.abort();
}
