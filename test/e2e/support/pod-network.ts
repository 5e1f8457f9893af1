/**
 * TEST-ONLY simulated CNI: the one simulated part of the KubeRay end-to-end stack. kwok gives each
 * Pod an IP from its Node's podCIDR but nothing answers there; this watches Ray head Pods and, once
 * kwok reports one Running with an IP, binds a free REAL Ray head (netns.ts: `rs-e2e-<label>`,
 * `10.213.<n>.2`) to it by putting the Pod IP on the head's namespace-side veth and routing that
 * /32 from the root namespace through the veth. From then on kube-apiserver's service and pod
 * proxies (KubeRay runs with `--use-kubernetes-proxy`), Traefik (EndpointSlice addresses are Pod
 * IPs) and the test's load all reach a real Ray head at the Pod's IP. Ray's dashboard
 * (`--dashboard-host=0.0.0.0`) and Serve's proxy (`http_options.host` 0.0.0.0 by default) listen
 * on every address of the namespace, so they answer on the added one too.
 *
 * When the Pod goes away (test/support/simulated-kubelet-deleter.ts removes it at once) the
 * address and route are removed first, then Serve is shut down through its REST API and the head
 * returns to the pool, as a deleted Pod's containers would stop. Only head Pods are bound: the e2e
 * RayClusters run no worker Pods, so every Ray process that matters is a head.
 */
import { execFileSync } from 'node:child_process';
import { KubeClient } from '../../../lib/runtime/kube/client';
import { CLUSTER_LABEL, NODE_TYPE_LABEL, POD } from '../../../lib/spec/object-names';
import { KubeObject } from '../../../lib/runtime/kube/types';
import type { ClusterRef } from '../../../lib/runtime/serve/errors';
import { DashboardResolver } from '../../../lib/runtime/serve/resolver';
import { netnsNames } from './netns';
import { RayHead, resetServe } from './ray-head';

/** Label KubeRay puts on a head Pod (`ray.io/node-type=head`). */
const HEAD_SELECTOR = { [NODE_TYPE_LABEL]: 'head' };

/** Options of `simulatePodNetwork`. */
export interface PodNetworkOptions {
  /** Called with every binding change (for test logs). */
  readonly onEvent?: (message: string) => void;
}

/** One Pod bound to a real head. */
export interface PodBinding {
  readonly namespace: string;
  readonly pod: string;
  readonly cluster: string;
  readonly podIP: string;
  readonly head: RayHead;
}

/** A running simulated pod network (see the file comment). */
export interface PodNetwork {
  /** Dashboard of the head bound to a RayCluster's head Pod (the head's own address, for samplers). */
  readonly resolver: DashboardResolver;
  /** Current bindings, `namespace/pod` → binding. */
  bindings(): ReadonlyMap<string, PodBinding>;
  /** Labels of the heads that are free and clean. */
  freeHeads(): string[];
  /** Every binding change so far, in order. */
  readonly events: readonly string[];
  /** Stops the watch, unbinds every Pod (addresses and routes removed); the heads keep running. */
  stop(): Promise<void>;
}

function ip(args: string[]): void {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

/** Puts `podIP` on head `label`'s namespace and routes it there from the root namespace. */
export function plug(label: string, podIP: string): void {
  const n = netnsNames(label);
  try {
    ip(['-n', n.namespace, 'addr', 'add', `${podIP}/32`, 'dev', n.innerLink]);
  } catch (err) {
    // Already there (a binding that outlived its watch event): keep it.
    if (!/File exists/.test(String((err as { stderr?: Buffer }).stderr ?? ''))) throw err;
  }
  ip(['route', 'replace', `${podIP}/32`, 'dev', n.rootLink]);
}

/** Removes what `plug` added; missing pieces are fine (the namespace may be gone already). */
export function unplug(label: string, podIP: string): void {
  const n = netnsNames(label);
  for (const args of [['route', 'del', `${podIP}/32`, 'dev', n.rootLink], ['-n', n.namespace, 'addr', 'del', `${podIP}/32`, 'dev', n.innerLink]]) {
    try {
      ip(args);
    } catch {
      // already gone
    }
  }
}

/** TEST-ONLY: see the file comment. The heads must be clean (no Serve). */
export function simulatePodNetwork(client: KubeClient, heads: readonly RayHead[], options: PodNetworkOptions = {}): PodNetwork {
  const free: RayHead[] = [...heads];
  const bound = new Map<string, PodBinding>();
  const waiting = new Map<string, KubeObject>(); // Running head Pods without a head yet, in arrival order
  const events: string[] = [];
  const log = (m: string) => {
    events.push(`${new Date().toISOString()} ${m}`);
    options.onEvent?.(m);
  };
  let stopped = false;
  let chain: Promise<void> = Promise.resolve();
  const serially = (f: () => Promise<void> | void) => {
    chain = chain.then(f).catch((err: Error) => log(`simulated pod network: ${err.message}`));
  };
  const keyOf = (p: KubeObject) => `${p.metadata.namespace}/${p.metadata.name}`;

  const bindWaiting = () => {
    for (const [key, pod] of [...waiting]) {
      if (stopped || free.length === 0) return;
      waiting.delete(key);
      const head = free.shift()!;
      const podIP = String((pod.status as { podIP: string }).podIP);
      plug(head.label, podIP);
      const b: PodBinding = { namespace: String(pod.metadata.namespace), pod: String(pod.metadata.name), cluster: pod.metadata.labels?.[CLUSTER_LABEL] ?? '', podIP, head };
      bound.set(key, b);
      log(`bound head Pod ${key} (RayCluster ${b.cluster}, IP ${podIP}) to Ray head ${head.label}`);
    }
  };

  const releasing = new Set<Promise<void>>();
  const unbind = (key: string) => {
    waiting.delete(key);
    const b = bound.get(key);
    if (!b) return;
    bound.delete(key);
    // The address goes at once, as a deleted Pod's network does; Serve shuts down beside the event
    // chain and the head rejoins the pool through it.
    unplug(b.head.label, b.podIP);
    log(`head Pod ${key} gone: ${b.podIP} unplugged from Ray head ${b.head.label}; Serve shuts down`);
    const p = resetServe(b.head)
      .then(
        () => serially(() => {
          free.push(b.head);
          log(`Ray head ${b.head.label} is free again`);
          bindWaiting();
        }),
        (err: Error) => log(`Ray head ${b.head.label} could not be reset and leaves the pool: ${err.message}`),
      )
      .finally(() => releasing.delete(p));
    releasing.add(p);
  };

  const pods = client.watch(POD, '*', (e) => {
    const pod = e.object;
    const key = keyOf(pod);
    const status = (pod.status ?? {}) as { phase?: string; podIP?: string };
    serially(() => {
      if (e.type === 'delete' || pod.metadata.deletionTimestamp || status.phase === 'Failed' || status.phase === 'Succeeded') return unbind(key);
      const b = bound.get(key);
      if (b && status.podIP !== b.podIP) unbind(key); // a new IP (never seen with kwok): rebind below
      if (bound.has(key) || status.phase !== 'Running' || !status.podIP) return;
      waiting.set(key, pod);
      bindWaiting();
    });
  }, { labelSelector: HEAD_SELECTOR });
  pods.start();

  const headOfCluster = (ref: ClusterRef) => [...bound.values()].find((b) => b.namespace === ref.namespace && b.cluster === ref.name)?.head;
  return {
    resolver: {
      resolve(ref: ClusterRef): string {
        const head = headOfCluster(ref);
        if (!head) throw new Error(`no Ray head is bound to the head Pod of RayCluster ${ref.namespace}/${ref.name} (TEST-ONLY simulated pod network)`);
        return head.dashboardUrl;
      },
    },
    bindings: () => new Map(bound),
    freeHeads: () => free.map((h) => h.label),
    events,
    async stop() {
      stopped = true;
      pods.stop();
      await chain;
      for (const b of bound.values()) unplug(b.head.label, b.podIP);
      bound.clear();
      await Promise.all([...releasing]);
    },
  };
}
