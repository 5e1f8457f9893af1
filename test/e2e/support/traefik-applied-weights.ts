/**
 * When Traefik's data plane took each weight vector of one route: its API's view of the route's
 * weighted service, polled. Traefik builds the API's handler from the same runtime configuration
 * as the entry points' routers and switches them together (v3's `switchRouter`), so the API shows
 * a vector exactly when requests start to be split by it. Each change is bracketed by two polls:
 * the last one that still showed the previous vector was sent at `before`, the first one showing
 * the new vector was answered at `at`; the switch happened between the two. Windows judged from
 * `at` to the next change's `before` hold one vector only, however long Traefik took to apply it
 * on a loaded machine. Test support.
 */
import type { AppliedWeightChange, WeightChange } from './analysis';

/** Pause between two polls of Traefik's API, ms (a poll answers in about a millisecond on loopback). */
const POLL_PAUSE_MS = 20;

/** A weighted service in Traefik's API (`/api/http/services`). */
interface ApiService {
  readonly name?: string;
  readonly weighted?: { readonly services?: readonly { readonly name: string; readonly weight?: number }[] };
}

/** How Traefik's kubernetesgateway provider starts the name of every service it makes for the route. */
function routeKeyPrefix(kind: string, namespace: string, routeName: string): string {
  return `${kind.toLowerCase()}-${namespace}-${routeName}-gw-`;
}

/**
 * The backends and weights of rule 0 of route `routeName` (`kind` HTTPRoute or GRPCRoute) in
 * Traefik's services: its kubernetesgateway provider names the weighted service of each match of
 * the rule `<kind>-<namespace>-<route>-gw-<gateway namespace>-<gateway>-ep-<entry point>-0-<match>-wrr`
 * (`<match>`: 20 hex digits of a hash of the match's rule, `makeRouterName`) and each of its backends `<that name without -wrr>-svc-<namespace>-<backend>-<index>`
 * (v3.7's `loadWRRService`); every match carries the rule's weights, so the first one is read.
 * Undefined while Traefik has no such service.
 */
export function appliedWeights(services: readonly ApiService[], kind: string, namespace: string, routeName: string): WeightChange['weights'] | undefined {
  const prefix = routeKeyPrefix(kind, namespace, routeName);
  const rule = services.find((s) => s.name?.startsWith(prefix) && /-0-[0-9a-f]+-wrr(@[\w-]+)?$/.test(s.name) && s.weighted);
  if (!rule) return undefined;
  const marker = `-svc-${namespace}-`;
  return (rule.weighted!.services ?? []).map((b) => {
    const bare = b.name.replace(/@[\w-]+$/, '');
    const backend = bare.slice(bare.lastIndexOf(marker) + marker.length).replace(/-\d+$/, '');
    return { name: backend, weight: b.weight ?? 1 };
  });
}

/** Polls Traefik's API at `apiAddress` and records every distinct weight vector of the route, bracketed (see the file comment). */
export function recordAppliedWeights(apiAddress: string, kind: string, namespace: string, routeName: string): { history: AppliedWeightChange[]; stop(): Promise<void> } {
  const history: AppliedWeightChange[] = [];
  const url = `${apiAddress}/api/http/services?per_page=1000&search=${encodeURIComponent(routeKeyPrefix(kind, namespace, routeName))}`;
  let stopped = false;
  let lastSentWithPrevious = Date.now();
  const loop = (async () => {
    while (!stopped) {
      const sent = Date.now();
      try {
        const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
        const weights = res.ok ? appliedWeights((await res.json()) as ApiService[], kind, namespace, routeName) : undefined;
        const answered = Date.now();
        const last = history[history.length - 1];
        if (weights && (!last || JSON.stringify(last.weights) !== JSON.stringify(weights))) history.push({ at: answered, before: lastSentWithPrevious, weights });
        else lastSentWithPrevious = sent;
      } catch {
        // Traefik busy or restarting: the next poll brackets the change all the same, only wider.
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_PAUSE_MS));
    }
  })();
  return {
    history,
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}
