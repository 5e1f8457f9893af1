/**
 * `Reachability`: network failures mark the API server unreachable, the first 2xx answer after one
 * wakes the waiting listeners once; non-2xx answers (a starting server's 503) wake nobody.
 */
import { KubeConnectionError } from '../../lib/runtime/kube/errors';
import { Reachability } from '../../lib/runtime/kube/reachability';
import { HttpRequest, HttpResponse, StreamHandle, Transport } from '../../lib/runtime/kube/transport';

/** Answers each request with the next scripted outcome: an HTTP status, or a refused connection. */
function scripted(outcomes: Array<number | 'refuse'>): Transport {
  const next = (req: HttpRequest): number => {
    const o = outcomes.shift();
    if (o === undefined) throw new Error(`no outcome scripted for ${req.path}`);
    if (o === 'refuse') throw new KubeConnectionError(req.method, req.path, Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }));
    return o;
  };
  return {
    server: 'https://scripted',
    request: async (req): Promise<HttpResponse> => ({ status: next(req), headers: {}, text: '{}' }),
    stream: async (req): Promise<StreamHandle> => ({ status: next(req), done: Promise.resolve(), abort: () => undefined }),
    close: () => undefined,
  };
}

const GET: HttpRequest = { method: 'GET', path: '/api/v1/namespaces' };

test('a refused connection marks the server unreachable; a 503 leaves it so; the next 2xx wakes each listener once', async () => {
  const r = new Reachability();
  const t = r.track(scripted(['refuse', 503, 200, 'refuse', 200]));
  const woken: string[] = [];
  r.onceRestored(() => woken.push('informer'));
  const cancelled = r.onceRestored(() => woken.push('cancelled'));
  cancelled();

  await expect(t.request(GET)).rejects.toBeInstanceOf(KubeConnectionError);
  expect(r.reachable).toBe(false);
  expect((await t.request(GET)).status).toBe(503);
  expect({ reachable: r.reachable, woken }).toEqual({ reachable: false, woken: [] });
  expect((await t.request(GET)).status).toBe(200);
  expect({ reachable: r.reachable, woken }).toEqual({ reachable: true, woken: ['informer'] });

  // A listener is called once: the next outage needs a new registration.
  await expect(t.request(GET)).rejects.toBeInstanceOf(KubeConnectionError);
  await t.request(GET);
  expect(woken).toEqual(['informer']);
});

test('streams count too: a refused watch marks it unreachable, a watch that opens with 200 restores it', async () => {
  const r = new Reachability();
  const t = r.track(scripted(['refuse', 200]));
  let restored = 0;
  r.onceRestored(() => restored++);
  await expect(t.stream(GET, () => undefined)).rejects.toBeInstanceOf(KubeConnectionError);
  expect(r.reachable).toBe(false);
  await t.stream(GET, () => undefined);
  expect({ reachable: r.reachable, restored }).toEqual({ reachable: true, restored: 1 });
});

test('a watch that breaks after opening marks it unreachable', async () => {
  const r = new Reachability();
  let fail!: (e: unknown) => void;
  const done = new Promise<void>((_, reject) => (fail = reject));
  done.catch(() => undefined);
  const t = r.track({ ...scripted([]), stream: async () => ({ status: 200, done, abort: () => undefined }) });
  await t.stream(GET, () => undefined);
  expect(r.reachable).toBe(true);
  fail(new KubeConnectionError('GET', GET.path, Object.assign(new Error('reset'), { code: 'ECONNRESET' })));
  await done.catch(() => undefined);
  await Promise.resolve();
  expect(r.reachable).toBe(false);
});
