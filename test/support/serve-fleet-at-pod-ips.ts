/**
 * TEST-ONLY "Serve fleet at Pod IPs": no Ray process runs in the test cluster, yet KubeRay started
 * with `--use-kubernetes-proxy` reaches each head's dashboard through kube-apiserver's service
 * proxy and Serve's proxy health through its pod proxy, so kube-apiserver dials the head Pod's IP.
 * This puts every head Pod's IP (kwok's, from the Node's podCIDR) on a veth interface in the root
 * network namespace and answers on 0.0.0.0:8265 (dashboard) and 0.0.0.0:8000 (`/-/healthz`) with the
 * simulated Serve dashboard of the cluster the request's local address belongs to
 * (`startServeFleetWhereNoRayRuns`, so Serve behaves as in every other suite). rayshift's operator
 * reaches the same dashboards through the fleet's address template. Needs root (the interface,
 * test/support/pod-ip-interface.ts, which says how to pick the Pod network).
 */
import * as http from 'node:http';
import { KubeClient } from '../../lib/runtime/kube/client';
import { POD } from '../../lib/spec/object-names';
import { createPodIpInterface } from './pod-ip-interface';
import { SimulatedServeFleet } from './simulated-controllers';

/** Ports of a Ray head this answers on: the dashboard and Serve's HTTP proxy. */
const HEAD_PORTS = [8265, 8000] as const;

/** A running fleet at Pod IPs; `stop()` closes the servers and removes the interface. */
export interface ServeFleetAtPodIps {
  /** Head Pods currently bound, `podIP` → `namespace/cluster`. */
  bound(): ReadonlyMap<string, string>;
  stop(): Promise<void>;
}

/** Starts the servers and the head-Pod watch on `client`; `device` names the interface. */
export async function startServeFleetAtPodIps(client: KubeClient, fleet: SimulatedServeFleet, device = 'rs-bench'): Promise<ServeFleetAtPodIps> {
  const base = new URL(fleet.template.replace('/{namespace}/{cluster}', ''));
  const iface = createPodIpInterface(device);
  const byIp = new Map<string, string>();
  const ipOfPod = new Map<string, string>();

  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const local = (req.socket.localAddress ?? '').replace(/^::ffff:/, '');
    const cluster = byIp.get(local);
    if (!cluster) {
      res.writeHead(502).end(`no head Pod at ${local}`);
      return;
    }
    const upstream = http.request({ host: base.hostname, port: base.port, path: `/${cluster}${req.url ?? '/'}`, method: req.method, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  };
  const servers = HEAD_PORTS.map(() => http.createServer(handler));
  await Promise.all(servers.map((s, i) => new Promise<void>((resolve, reject) => s.once('error', reject).listen(HEAD_PORTS[i], '0.0.0.0', resolve))));

  const unbind = (key: string) => {
    const addr = ipOfPod.get(key);
    if (addr === undefined) return;
    ipOfPod.delete(key);
    byIp.delete(addr);
    iface.remove(addr);
  };
  const informer = client.watch(POD, '*', (e) => {
    const pod = e.object;
    const labels = pod.metadata.labels ?? {};
    if (labels['ray.io/node-type'] !== 'head') return;
    const key = `${pod.metadata.namespace}/${pod.metadata.name}`;
    const podIP = (pod.status as { podIP?: string } | undefined)?.podIP;
    if (e.type === 'delete' || pod.metadata.deletionTimestamp || !podIP) {
      unbind(key);
      return;
    }
    if (ipOfPod.get(key) === podIP) return;
    unbind(key);
    iface.add(podIP);
    ipOfPod.set(key, podIP);
    byIp.set(podIP, `${pod.metadata.namespace}/${labels['ray.io/cluster']}`);
  }, { resyncIntervalMs: 0 });
  informer.start();
  return {
    bound: () => byIp,
    async stop() {
      informer.stop();
      await Promise.all(
        servers.map((s) => {
          const closed = new Promise<void>((resolve) => s.close(() => resolve()));
          s.closeAllConnections();
          return closed;
        }),
      );
      iface.close();
    },
  };
}
