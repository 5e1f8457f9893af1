/**
 * TEST-ONLY "PD workers at Pod IPs": kwok's Pods run no process, so nothing would answer a router
 * that dials a prefill or decode Pod at its IP. This watches a RoleBasedGroup's prefill and decode
 * Pods (RBG's group and role labels) and, for each Pod with a `podIP`, puts the IP on a host
 * interface (test/support/pod-ip-interface.ts) and starts a SIMULATED worker of the Pod's role and
 * release (its container's image tag, test/support/simulated-pd-worker.ts) at `podIP:<port>`, a
 * prefill also at `podIP:<bootstrapPort>`: the ports the rendered router is told (its
 * `--service-discovery-port` and the Pods' bootstrap-port annotation). The worker starts when the Pod
 * has its IP, as a container starts; kwok reports it Ready at once, and a router that dials before
 * the worker listens retries, as it would a model still loading.
 *
 * A Pod that goes away (deleted, or terminating) drains its worker and then gives up its address; a
 * Pod whose image changes in place (a kubelet restarting its container) drains the old release's
 * worker and starts the new one at the same address. Changes to one IP run one at a time, so a new
 * Pod given a departed Pod's IP starts once the old worker has drained. Every request a decode serves
 * is appended to `served`. Of lib/ it imports only the Kubernetes client and name constants.
 */
import type { KubeClient } from '../../lib/runtime/kube/client';
import { POD, RBG_V1ALPHA2_POD_LABELS } from '../../lib/spec/object-names';
import { createPodIpInterface } from './pod-ip-interface';
import { ServedPair, SimulatedWorker, startSimulatedDecode, startSimulatedPrefill } from './simulated-pd-worker';

/** What the workers are: the group, its prefill and decode role names, and the ports their router dials. */
export interface PdWorkerOptions {
  readonly namespace: string;
  readonly group: string;
  readonly prefillRole: string;
  readonly decodeRole: string;
  /** Each worker's HTTP port (the router's `--service-discovery-port`). */
  readonly port: number;
  /** Each prefill's bootstrap port (the Pods' bootstrap-port annotation). */
  readonly bootstrapPort: number;
  /** The host interface's name (at most 13 characters: its peer is `<device>-p`). */
  readonly device: string;
  /** The test cluster's Pod network (a CIDR): its addresses no Pod holds are unreachable at once. */
  readonly podNetwork: string;
}

/** One worker at one Pod IP. */
export interface PodWorker {
  readonly pod: string;
  readonly uid: string;
  readonly role: 'prefill' | 'decode';
  readonly release: string;
}

/** A running set of workers; `stop()` ends the watch, closes every worker and removes the interface. */
export interface PdWorkersAtPodIps {
  /** The workers serving now, by Pod IP (throws what a worker failed to start with). */
  running(): ReadonlyMap<string, PodWorker>;
  stop(): Promise<void>;
}

interface Live extends PodWorker {
  readonly worker: SimulatedWorker;
}

/** Starts watching the group's Pods in `opts.namespace` on `client`. */
export function startPdWorkersAtPodIps(client: KubeClient, opts: PdWorkerOptions, served: ServedPair[]): PdWorkersAtPodIps {
  const iface = createPodIpInterface(opts.device, opts.podNetwork);
  const live = new Map<string, Live>();
  const started: SimulatedWorker[] = [];
  const addressed = new Set<string>();
  // One change at a time per IP, in the order the watch delivered them.
  const queues = new Map<string, Promise<void>>();
  let failure: Error | undefined;
  let stopped = false;

  const reconcile = async (ip: string, uid: string, pod: string, wanted: { role: 'prefill' | 'decode'; release: string } | undefined) => {
    const cur = live.get(ip);
    if (cur && cur.uid === uid && wanted && cur.role === wanted.role && cur.release === wanted.release) return;
    // Another Pod's worker here and this Pod gone: an old event of a Pod whose IP moved on.
    if (!wanted && cur?.uid !== uid) return;
    if (cur) {
      live.delete(ip);
      await cur.worker.drain();
    }
    if (!wanted || stopped) {
      if (!live.has(ip) && addressed.delete(ip)) iface.remove(ip);
      return;
    }
    if (!addressed.has(ip)) {
      iface.add(ip);
      addressed.add(ip);
    }
    const worker =
      wanted.role === 'prefill'
        ? await startSimulatedPrefill(pod, wanted.release, { host: ip, port: opts.port, bootstrapPort: opts.bootstrapPort })
        : await startSimulatedDecode(pod, wanted.release, served, { host: ip, port: opts.port });
    started.push(worker);
    live.set(ip, { pod, uid, ...wanted, worker });
  };

  const watch = client.watch(POD, opts.namespace, (e) => {
    const p = e.object;
    const labels = (p.metadata.labels ?? {}) as Record<string, string>;
    if (labels[RBG_V1ALPHA2_POD_LABELS.group] !== opts.group) return;
    const roleLabel = labels[RBG_V1ALPHA2_POD_LABELS.role];
    const role = roleLabel === opts.prefillRole ? 'prefill' : roleLabel === opts.decodeRole ? 'decode' : undefined;
    const ip = (p.status as { podIP?: string } | undefined)?.podIP;
    if (!role || !ip) return;
    const image = String((p.spec as any)?.containers?.[0]?.image ?? '');
    const gone = e.type === 'delete' || p.metadata.deletionTimestamp !== undefined;
    const wanted = gone ? undefined : { role: role as 'prefill' | 'decode', release: image.slice(image.lastIndexOf(':') + 1) };
    const uid = String(p.metadata.uid);
    const next = (queues.get(ip) ?? Promise.resolve()).then(() => reconcile(ip, uid, String(p.metadata.name), wanted)).catch((err: Error) => {
      failure ??= err;
    });
    queues.set(ip, next);
  });

  return {
    running: () => {
      if (failure) throw failure;
      return new Map([...live].map(([ip, { worker: _w, ...w }]) => [ip, w]));
    },
    stop: async () => {
      stopped = true;
      watch.stop();
      // A drain waiting for a room nobody asks for would hold this: close every worker at once.
      await Promise.all(started.map((w) => w.close()));
      live.clear();
      iface.close();
    },
  };
}
