/**
 * The simulated kubelet deleter's decisions, on a scripted API server (the cluster suite
 * cluster-scheduler-kwok shows them against the real one): which Pods it deletes, how (grace 0,
 * UID precondition), once per UID, and what it makes of 404 and 409.
 */
import { KubeClient } from '../../lib/runtime/kube/client';
import { HttpRequest, HttpResponse, StreamHandle, Transport } from '../../lib/runtime/kube/transport';
import { startSimulatedKubeletDeleter } from './simulated-kubelet-deleter';

/** Lists `pods`, then streams what `push` sends; answers each DELETE with the next of `answers` (default 200). */
class PodServer implements Transport {
  readonly server = 'https://fake';
  readonly deletes: { path: string; body: unknown }[] = [];
  readonly paths: string[] = [];
  private onLine?: (line: string) => void;
  private streamed!: () => void;
  readonly streaming = new Promise<void>((r) => (this.streamed = r));
  constructor(private readonly pods: object[], private readonly answers: number[] = []) {}
  async request(req: HttpRequest): Promise<HttpResponse> {
    this.paths.push(req.path);
    if (req.method === 'DELETE') {
      this.deletes.push({ path: req.path, body: JSON.parse(req.body ?? '{}') });
      const status = this.answers.shift() ?? 200;
      return reply(status, status === 200 ? {} : { kind: 'Status', code: status, reason: status === 409 ? 'Conflict' : 'NotFound' });
    }
    return reply(200, { kind: 'PodList', metadata: { resourceVersion: '1' }, items: this.pods });
  }
  async stream(_req: HttpRequest, onLine: (line: string) => void): Promise<StreamHandle> {
    this.onLine = onLine;
    this.streamed();
    let end!: () => void;
    const done = new Promise<void>((r) => (end = r));
    return { status: 200, done, abort: () => end() };
  }
  push(type: 'ADDED' | 'MODIFIED', pod: object): void {
    this.onLine!(JSON.stringify({ type, object: pod }));
  }
  close(): void {}
}

function reply(status: number, body: unknown): HttpResponse {
  return { status, headers: { 'content-type': 'application/json' }, text: JSON.stringify(body) };
}

let rv = 1;
function pod(name: string, uid: string, node: string, meta: Record<string, unknown> = {}): object {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'ns', uid, resourceVersion: String(++rv), ...meta }, spec: { nodeName: node } };
}
const TERMINATING = { deletionTimestamp: '2026-01-01T00:00:00Z' };

/** Waits until the deleter's DELETEs in flight are answered (they are sent from the watch handler). */
async function settled(server: PodServer, n: number): Promise<void> {
  while (server.deletes.length < n) await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
}

test('deletes a terminating Pod of a kwok Node without finalizers once, by UID with grace 0; leaves other Nodes, finalizers and live Pods alone', async () => {
  const server = new PodServer([
    pod('live', 'u-live', 'kwok-node-0'),
    pod('held', 'u-held', 'kwok-node-0', { ...TERMINATING, finalizers: ['example.com/hold'] }),
    pod('elsewhere', 'u-else', 'other-node', TERMINATING),
    pod('gone', 'u-gone', 'kwok-node-1', TERMINATING),
  ]);
  const client = new KubeClient(server);
  const deleter = startSimulatedKubeletDeleter(client, ['kwok-node-0', 'kwok-node-1']);
  await deleter.synced();
  await settled(server, 1);
  expect(server.paths[0]).toBe('/api/v1/pods?fieldSelector=spec.nodeName%21%3D&limit=500');
  expect(server.deletes).toEqual([{ path: '/api/v1/namespaces/ns/pods/gone', body: expect.objectContaining({ gracePeriodSeconds: 0, preconditions: { uid: 'u-gone' } }) }]);
  // The same UID again (a later event of it): no second delete. The finalizer removed: now it goes.
  await server.streaming;
  server.push('MODIFIED', pod('gone', 'u-gone', 'kwok-node-1', TERMINATING));
  server.push('MODIFIED', pod('held', 'u-held', 'kwok-node-0', { ...TERMINATING, finalizers: [] }));
  await settled(server, 2);
  expect(server.deletes.map((d) => (d.body as any).preconditions.uid)).toEqual(['u-gone', 'u-held']);
  await deleter.stop();
  expect(deleter.counts()).toEqual({ deleted: 2, alreadyGone: 0, nameReused: 0, failures: [] });
});

test('404 and 409 are counted, not failures; any other answer is a failure and the UID is tried again at its next event', async () => {
  const server = new PodServer([pod('a', 'u-a', 'n', TERMINATING), pod('b', 'u-b', 'n', TERMINATING), pod('c', 'u-c', 'n', TERMINATING)], [404, 409, 500]);
  const deleter = startSimulatedKubeletDeleter(new KubeClient(server), ['n']);
  await deleter.synced();
  await settled(server, 3);
  await server.streaming;
  server.push('MODIFIED', pod('b', 'u-b', 'n', TERMINATING));
  server.push('MODIFIED', pod('c', 'u-c', 'n', TERMINATING));
  await settled(server, 4);
  await deleter.stop();
  expect(server.deletes.map((d) => (d.body as any).preconditions.uid)).toEqual(['u-a', 'u-b', 'u-c', 'u-c']);
  const { failures, ...counts } = deleter.counts();
  expect(counts).toEqual({ deleted: 1, alreadyGone: 1, nameReused: 1 });
  expect(failures).toHaveLength(1);
  expect(failures[0]).toMatch(/^ns\/c: /);
});
