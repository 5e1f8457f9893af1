/**
 * TEST-ONLY: sglang-router's Kubernetes service discovery, played for kwok Pods. kwok runs no
 * process, so no worker answers at a Pod's IP; this watches the Pods as the router's discovery would
 * (its `--prefill-selector` / `--decode-selector`, Pods Ready and not terminating), and for each Pod
 * that joins starts a SIMULATED worker (test/support/simulated-pd-worker.ts) of the Pod's release,
 * its container's image tag, then registers it with the REAL router through the router's own API
 * (`POST /workers`, sglang-router 0.3.2); a Pod that leaves, or turns to another image in place, is
 * deregistered (`DELETE /workers/<id>`). A deregistered worker keeps serving what the router already
 * sent it (a Pod drains), and closes with `stop()`. Of lib/ it imports only the Kubernetes client
 * and the Pod type (the way to watch, not code under test).
 */
import type { KubeClient } from '../../lib/runtime/kube/client';
import { POD } from '../../lib/spec/object-names';
import { ServedPair, SimulatedWorker, startSimulatedDecode, startSimulatedPrefill } from './simulated-pd-worker';

/** Label selectors of one router, as its `--prefill-selector` / `--decode-selector` give them. */
export interface RouterSelectors {
  readonly prefill: Readonly<Record<string, string>>;
  readonly decode: Readonly<Record<string, string>>;
}

/** A running discovery; `stop()` ends the watch and closes every worker it started. */
export interface SimulatedPodDiscovery {
  /** Workers currently registered with the router, by role and release. */
  registered(): Registered;
  stop(): Promise<void>;
}

/** Registered workers by role, then by release (image tag). */
export interface Registered {
  readonly prefill: Readonly<Record<string, number>>;
  readonly decode: Readonly<Record<string, number>>;
}

interface Member {
  readonly key: string;
  readonly id: string;
}

/**
 * The selectors in a rendered router Deployment's args (`--prefill-selector k=v … --decode-selector
 * k=v …`), read from the object as synthesized: the discovery then follows what is deployed.
 */
export function routerSelectorsOf(deployment: unknown): RouterSelectors {
  const args: string[] = (deployment as any)?.spec?.template?.spec?.containers?.[0]?.args ?? [];
  const read = (flag: string): Record<string, string> => {
    const out: Record<string, string> = {};
    for (let i = args.indexOf(flag) + 1; i > 0 && i < args.length && !args[i].startsWith('--'); i++) {
      const [k, v] = args[i].split('=');
      out[k] = v;
    }
    if (Object.keys(out).length === 0) throw new Error(`router Deployment ${(deployment as any)?.metadata?.name}: no ${flag} in its args`);
    return out;
  };
  return { prefill: read('--prefill-selector'), decode: read('--decode-selector') };
}

function matches(labels: Record<string, string>, selector: Readonly<Record<string, string>>): boolean {
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}

async function routerCall(url: string, init: RequestInit): Promise<any> {
  const res = await fetch(url, { ...init, headers: { 'content-type': 'application/json' } });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${init.method} ${url}: HTTP ${res.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : {};
}

/**
 * Starts discovering the Pods of `namespace` that `selectors` select for the router at `routerUrl`;
 * every request the router's decodes serve is appended to `served`.
 */
export function startSimulatedPodDiscovery(client: KubeClient, namespace: string, selectors: RouterSelectors, routerUrl: string, served: ServedPair[]): SimulatedPodDiscovery {
  const members = new Map<string, Member>();
  const workers: SimulatedWorker[] = [];
  const counts: Record<'prefill' | 'decode', Record<string, number>> = { prefill: {}, decode: {} };
  const count = (key: string, by: number) => {
    const [role, release] = key.split('/') as ['prefill' | 'decode', string];
    counts[role][release] = (counts[role][release] ?? 0) + by;
  };
  // One change at a time per Pod, in the order the watch delivered them.
  const queues = new Map<string, Promise<void>>();
  let failure: Error | undefined;

  const reconcile = async (uid: string, role: 'prefill' | 'decode' | undefined, wanted: string | undefined, name: string) => {
    const have = members.get(uid);
    if (have && have.key !== wanted) {
      members.delete(uid);
      count(have.key, -1);
      await routerCall(`${routerUrl}/workers/${have.id}`, { method: 'DELETE' });
    }
    if (!wanted || !role || members.get(uid)) return;
    const release = wanted.split('/')[1];
    let body: Record<string, unknown>;
    if (role === 'prefill') {
      const w = await startSimulatedPrefill(name, release);
      workers.push(w);
      body = { url: w.url, worker_type: 'prefill', bootstrap_port: w.bootstrapPort };
    } else {
      const w = await startSimulatedDecode(name, release, served);
      workers.push(w);
      body = { url: w.url, worker_type: 'decode' };
    }
    const answer = await routerCall(`${routerUrl}/workers`, { method: 'POST', body: JSON.stringify(body) });
    members.set(uid, { key: wanted, id: String(answer.worker_id) });
    count(wanted, 1);
  };

  const watch = client.watch(POD, namespace, (e) => {
    const pod = e.object;
    const labels = (pod.metadata.labels ?? {}) as Record<string, string>;
    const role = matches(labels, selectors.prefill) ? 'prefill' : matches(labels, selectors.decode) ? 'decode' : undefined;
    const ready = ((pod.status as any)?.conditions ?? []).some((c: any) => c.type === 'Ready' && c.status === 'True');
    const image = String((pod.spec as any)?.containers?.[0]?.image ?? '');
    const tag = image.slice(image.lastIndexOf(':') + 1);
    const wanted = role && ready && !pod.metadata.deletionTimestamp && e.type !== 'delete' ? `${role}/${tag}` : undefined;
    const uid = String(pod.metadata.uid);
    const next = (queues.get(uid) ?? Promise.resolve()).then(() => reconcile(uid, role, wanted, String(pod.metadata.name))).catch((err: Error) => {
      failure ??= err;
    });
    queues.set(uid, next);
  });

  return {
    registered: () => {
      if (failure) throw failure;
      return { prefill: { ...counts.prefill }, decode: { ...counts.decode } };
    },
    stop: async () => {
      watch.stop();
      await Promise.all(queues.values());
      await Promise.all(workers.map((w) => w.close()));
    },
  };
}
