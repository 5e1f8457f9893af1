/**
 * Unit tests (run by `npm test`, not the e2e config) of the end-to-end suite's pure parts and its
 * load generator against a local node:http server on loopback.
 */
import * as http from 'node:http';
import * as http2 from 'node:http2';
import { AddressInfo } from 'node:net';
import { perSecondShare, perSecondShareBySend, replicaMismatches, shareDecreases, switchLagMs, windowShares, windowTolerancePoints, windowsOutOfTolerance, ServeSample, WindowShare } from './support/analysis';
import { startDashboardProxy } from './support/dashboard-proxy';
import { appliedWeights } from './support/traefik-applied-weights';
import { decodeStrings, encodeStrings, grpcFrame, grpcSender } from './support/grpc-load';
import { LoadSecond, SendResult, httpSender, startLoad } from './support/load';

function second(i: number, versions: Record<string, number>): LoadSecond {
  const ok = Object.values(versions).reduce((a, b) => a + b, 0);
  return { second: i, sent: ok, ok, failures: 0, timeouts: 0, skipped: 0, versions, failureDetails: {} };
}

describe('share analysis', () => {
  test('a share that only grows (or wobbles by less than 3 requests) has no decreases; a real drop is reported', () => {
    const rising = perSecondShare([second(0, { v1: 50 }), second(1, { v1: 38, v2: 12 }), second(2, { v1: 39, v2: 11 }), second(3, { v2: 50 })], 'v2');
    expect(shareDecreases(rising)).toEqual([]);
    const dropping = perSecondShare([second(0, { v1: 25, v2: 25 }), second(1, { v1: 45, v2: 5 })], 'v2');
    expect(shareDecreases(dropping)).toEqual([{ second: 1, from: 0.5, to: 0.1 }]);
  });

  test('per-second share by send time: a request due in one second but sent in the next counts in the next', () => {
    const requests = [
      { at: 100, version: 'v1' },
      { at: 900, sentAt: 1200, version: 'v2' },
      { at: 950 }, // failed: not an answer
      { at: 1500, version: 'v2' },
    ];
    expect(perSecondShareBySend(requests, 0, 'v2')).toEqual([{ second: 0, share: 0, answers: 1 }, { second: 1, share: 1, answers: 2 }]);
  });

  test('window shares compare each stretch the data plane held one weight vector with its weight, and skip short windows', () => {
    // Traefik switched to 75/25 somewhere after 900 ms and by 1200 ms, to b alone after 3100 and by 3200.
    const history = [
      { before: 0, at: 0, weights: [{ name: 'a', weight: 100 }, { name: 'b', weight: 0 }] },
      { before: 900, at: 1200, weights: [{ name: 'a', weight: 75 }, { name: 'b', weight: 25 }] },
      { before: 3100, at: 3200, weights: [{ name: 'b', weight: 100 }] },
    ];
    const requests = [] as { at: number; version?: string }[];
    for (let t = 0; t < 4000; t += 10) {
      const version = t < 1100 ? 'v1' : t < 3150 ? (t % 40 === 0 ? 'v2' : 'v1') : 'v2';
      requests.push({ at: t, version });
    }
    requests.push({ at: 2000 }); // a failure is not an answer
    const w = windowShares(history, requests, 'v2', (b) => b === 'b', { endGuardMs: 0, endAt: 4000, minAnswers: 20 });
    expect(w.map((x) => [x.expectedPercent, Math.round(x.observedPercent), x.from, x.to])).toEqual([[0, 0, 0, 900], [25, 25, 1200, 3100], [100, 100, 3200, 4000]]);
    // the answers between a change's `before` and `at` (either vector may have served them) are in no window
    expect(w.reduce((n, x) => n + x.answers, 0)).toBe(90 + 190 + 80);
    expect(windowShares(history, requests, 'v2', (b) => b === 'b', { endGuardMs: 0, endAt: 4000, minAnswers: 91 }).map((x) => x.expectedPercent)).toEqual([25]);
    // by default a window ends 100 ms before the next vector's `before` and needs 50 answers
    expect(windowShares(history, requests, 'v2', (b) => b === 'b', { endAt: 4000 }).map((x) => [x.expectedPercent, x.from, x.to, x.answers])).toEqual([[0, 0, 800, 80], [25, 1200, 3000, 180], [100, 3200, 4000, 80]]);
  });

  test('Traefik\'s weighted service of a route\'s first rule reads back as backend Services and weights', () => {
    const key = 'httproute-e2e-svc-1-httproute-gw-e2e-gw-ep-web-0-fc344df89b6d773f1900';
    const services = [
      { name: `${key}-svc-e2e-svc-1-a-serve-svc-0@kubernetesgateway`, loadBalancer: {} },
      { name: 'httproute-e2e-svc-10-httproute-gw-e2e-gw-ep-web-0-fc344df89b6d773f1900-wrr@kubernetesgateway', weighted: { services: [{ name: 'x', weight: 1 }] } },
      { name: `${key}-wrr@kubernetesgateway`, weighted: { services: [{ name: `${key}-svc-e2e-svc-1-a-serve-svc-0`, weight: 0 }, { name: `${key}-svc-e2e-svc-1-b-serve-svc-1`, weight: 100 }] } },
    ];
    expect(appliedWeights(services, 'HTTPRoute', 'e2e', 'svc-1-httproute')).toEqual([{ name: 'svc-1-a-serve-svc', weight: 0 }, { name: 'svc-1-b-serve-svc', weight: 100 }]);
    expect(appliedWeights(services.slice(0, 2), 'HTTPRoute', 'e2e', 'svc-1-httproute')).toBeUndefined();
  });

  test('requests are placed in windows by the time they were sent, not the time they were due', () => {
    const history = [
      { before: 0, at: 0, weights: [{ name: 'a', weight: 100 }] },
      { before: 2000, at: 2000, weights: [{ name: 'b', weight: 100 }] },
    ];
    // due before the switch, sent (and answered by b) after it: they belong to b's window
    const requests = Array.from({ length: 200 }, (_, i) => ({ at: 1000 + i * 5, sentAt: 1000 + i * 5 + (i >= 100 ? 2500 : 0), version: i >= 100 ? 'v2' : 'v1' }));
    const w = windowShares(history, requests, 'v2', (b) => b === 'b', { endGuardMs: 0, endAt: 5000, minAnswers: 50 });
    expect(w.map((x) => [x.expectedPercent, x.observedPercent])).toEqual([[0, 0], [100, 100]]);
  });

  test('the window tolerance is 5 points plus two requests of granularity, and a real deviation fails it', () => {
    expect(windowTolerancePoints(400)).toBeCloseTo(5.5);
    expect(windowTolerancePoints(100)).toBeCloseTo(7);
    const window = (expectedPercent: number, fromNew: number, answers: number): WindowShare => ({ expectedPercent, observedPercent: (100 * fromNew) / answers, answers, fromNew, tolerancePoints: windowTolerancePoints(answers), from: 0, to: 1 });
    const ok = [window(25, 121, 400), window(25, 79, 400), window(0, 2, 400), window(100, 400, 400), window(50, 57, 100)];
    expect(windowsOutOfTolerance(ok)).toEqual([]);
    const bad = [window(25, 123, 400), window(0, 23, 400), window(100, 370, 400), window(50, 58, 100)];
    expect(windowsOutOfTolerance(bad)).toEqual(bad);
  });

  test('switch lag: the last answer from another version after the new one got 100 %', () => {
    const history = [
      { at: 0, weights: [{ name: 'a', weight: 50 }, { name: 'b', weight: 50 }] },
      { at: 1000, weights: [{ name: 'a', weight: 0 }, { name: 'b', weight: 100 }] },
      { at: 2000, weights: [{ name: 'b', weight: 100 }] },
    ];
    const isNew = (b: string) => b === 'b';
    expect(switchLagMs(history, [{ at: 900, version: 'v1' }, { at: 1300, sentAt: 1400, version: 'v1' }, { at: 1500, version: 'v2' }, { at: 1600 }], 'v2', isNew)).toBe(400);
    expect(switchLagMs(history.slice(0, 1), [], 'v2', isNew)).toBeUndefined();
  });

  test('replica mismatches: only settled samples count, judged by Serve\'s own capacity rounding', () => {
    const s = (tc: number | null, running: number, app = 'RUNNING', dep = 'HEALTHY'): ServeSample => ({ at: 0, cluster: 'c', targetCapacity: tc, numReplicas: 4, targetReplicas: 0, running, appStatus: app, deploymentStatus: dep });
    expect(replicaMismatches([s(25, 1), s(50, 2), s(null, 4), s(0, 0), s(75, 1, 'DEPLOYING', 'UPSCALING')])).toEqual([]);
    expect(replicaMismatches([s(50, 3)])).toHaveLength(1);
  });
});

describe('gRPC wire helpers', () => {
  test('string fields round-trip, including multi-byte lengths', () => {
    const long = 'x'.repeat(300);
    expect(decodeStrings(encodeStrings({ 1: 'v2', 2: long }))).toEqual({ 1: 'v2', 2: long });
    const framed = grpcFrame(encodeStrings({ 1: 'a' }));
    expect([...framed.subarray(0, 5)]).toEqual([0, 0, 0, 0, 3]);
  });

  test('the sender reads version and cluster from a unary h2c answer and reports a non-zero grpc-status as a failure', async () => {
    let fail = false;
    const server = http2.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/grpc' });
        if (fail) {
          res.addTrailers({ 'grpc-status': '14', 'grpc-message': 'unavailable' });
          res.end();
          return;
        }
        res.addTrailers({ 'grpc-status': '0' });
        res.end(grpcFrame(encodeStrings({ 1: 'v7', 2: 'ray-a' })));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const sender = grpcSender('127.0.0.1', (server.address() as AddressInfo).port, 'echo');
    try {
      expect(await sender.send(new AbortController().signal)).toEqual({ ok: true, version: 'v7', cluster: 'ray-a' });
      fail = true;
      expect(await sender.send(new AbortController().signal)).toEqual({ ok: false, detail: 'grpc-status 14: unavailable' });
    } finally {
      sender.close();
      await new Promise((r) => server.close(r));
    }
  });
});

describe('fixed-rate load generator', () => {
  test('the HTTP sender reports when a request went out: a request queued behind a busy connection is sent when the connection frees', async () => {
    // The server holds the first answer until the test releases it: the second request, queued
    // behind it on the one connection, goes out after the release (an order of events, not a time
    // window): the sender and the test read one counter that ticks at each event.
    let tick = 0;
    const clock = (): number => ++tick;
    const arrived: number[] = [];
    let held: http.ServerResponse | undefined;
    let firstArrived!: () => void;
    const first = new Promise<void>((resolve) => (firstArrived = resolve));
    const server = http.createServer((_req, res) => {
      arrived.push(clock());
      if (arrived.length > 1) {
        res.writeHead(200, { 'x-rayshift-version': 'v2' }).end('{}');
        return;
      }
      held = res;
      firstArrived();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const sender = httpSender('127.0.0.1', (server.address() as AddressInfo).port, { maxSockets: 1, now: clock });
    try {
      const both = Promise.all([sender.send(new AbortController().signal), sender.send(new AbortController().signal)]);
      await first;
      const releasedAt = clock();
      held!.writeHead(200, { 'x-rayshift-version': 'v1' }).end('{}');
      const [a, b] = await both;
      expect([a.version, b.version]).toEqual(['v1', 'v2']);
      expect(arrived).toHaveLength(2);
      expect(a.sentAt!).toBeLessThanOrEqual(arrived[0]);
      expect(b.sentAt!).toBeGreaterThanOrEqual(releasedAt);
      expect(b.sentAt!).toBeLessThanOrEqual(arrived[1]);
    } finally {
      sender.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  test('the HTTP sender names the version of a 2xx answer and reports any other status as a failure', async () => {
    const statuses = [200, 503];
    const server = http.createServer((_req, res) => {
      const status = statuses.shift()!;
      res.writeHead(status, { 'content-type': 'application/json', ...(status === 200 ? { 'x-rayshift-version': 'v3' } : {}) }).end(JSON.stringify({ cluster: 'c' }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const sender = httpSender('127.0.0.1', (server.address() as AddressInfo).port);
    try {
      expect(await sender.send(new AbortController().signal)).toMatchObject({ ok: true, version: 'v3', cluster: 'c' });
      expect(await sender.send(new AbortController().signal)).toEqual({ ok: false, detail: 'HTTP 503' });
    } finally {
      sender.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  describe('on jest\'s fake clock', () => {
    const FAKE_START = 1_000_000;
    beforeEach(() => jest.useFakeTimers({ now: FAKE_START }));
    afterEach(() => jest.useRealTimers());

    test('offers the rate regardless of answers and counts answers per version, failures and timeouts per second', async () => {
      // A scripted sender: every 10th request fails, every 10th (offset 5) never answers, the rest alternate versions.
      let n = 0;
      const send = (signal: AbortSignal): Promise<SendResult> => {
        n++;
        if (n % 10 === 0) return Promise.resolve({ ok: false, detail: 'HTTP 503' });
        if (n % 10 === 5) return new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('aborted'))));
        return Promise.resolve({ ok: true, version: n % 2 ? 'v1' : 'v2' });
      };
      const load = startLoad(send, { ratePerSecond: 100, timeoutMs: 3000, durationMs: 1000, recordRequests: true });
      await jest.advanceTimersByTimeAsync(1000);
      const stopped = load.stop();
      await jest.advanceTimersByTimeAsync(3000); // the unanswered requests time out
      const t = await stopped;
      // Exactly the offered rate: one request every 10 ms of the second.
      expect(t.sent).toBe(100);
      expect(n).toBe(100);
      expect(load.seconds.map((s) => s.sent)).toEqual([100]);
      expect(t.failures).toBe(10);
      expect(t.failureDetails).toEqual({ 'HTTP 503': 10 });
      expect(t.timeouts).toBe(10);
      expect(t.ok).toBe(80);
      expect(t.versions).toEqual({ v1: 40, v2: 40 });
      expect(load.requests.filter((r) => r.version !== undefined)).toHaveLength(t.ok);
      // Answered and failed requests carry the time their answer came; timed-out ones none.
      expect(load.requests.filter((r) => r.answeredAt !== undefined)).toHaveLength(t.ok + t.failures);
      expect(load.requests.filter((r) => r.answeredAt !== undefined && r.answeredAt < (r.sentAt ?? r.at))).toEqual([]);
    });

    test('requests due while the event loop was late are still started, each in the second it was due', async () => {
      const send = (): Promise<SendResult> => Promise.resolve({ ok: true, version: 'v1' });
      const load = startLoad(send, { ratePerSecond: 10, durationMs: 5000 });
      // The loop is 1.5 s late: the 15 requests due meanwhile start at once, counted in seconds 0 and 1.
      jest.setSystemTime(FAKE_START + 1500);
      await jest.advanceTimersByTimeAsync(5);
      expect(load.seconds.map((s) => s.sent)).toEqual([10, 6]);
      const t = await load.stop();
      expect(t.sent).toBe(16);
    });
  });
});

describe('dashboard proxy (the Pulumi executor\'s way to the heads)', () => {
  test('forwards kubectl-proxy-shaped paths to the bound head (method, body, headers, status) and refuses unbound clusters and other paths', async () => {
    const seen: { method?: string; url?: string; body: string; auth?: string }[] = [];
    const head = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({ method: req.method, url: req.url, body: Buffer.concat(chunks).toString(), auth: req.headers['x-ray-authorization'] as string | undefined });
        res.writeHead(req.method === 'PUT' ? 200 : 418, { 'x-head': 'a' }).end('{"ok":true}');
      });
    });
    await new Promise<void>((r) => head.listen(0, '127.0.0.1', r));
    const headUrl = `http://127.0.0.1:${(head.address() as AddressInfo).port}`;
    const proxy = await startDashboardProxy({
      resolve: (c) => {
        if (c.name !== 'svc-abcde') throw new Error(`no Ray head is bound to RayCluster ${c.namespace}/${c.name}`);
        return headUrl;
      },
    });
    const call = (url: string, method = 'GET', body?: string) =>
      new Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }>((resolve, reject) => {
        const req = http.request(url, { method, headers: { 'x-ray-authorization': 'Bearer t' } }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), headers: res.headers }));
        });
        req.on('error', reject);
        req.end(body);
      });
    try {
      const base = proxy.template.replace('{namespace}', 'e2e').replace('{cluster}', 'svc-abcde');
      expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v1\/namespaces\/e2e\/services\/svc-abcde-head-svc:dashboard\/proxy$/);
      const put = await call(`${base}/api/serve/applications/?x=1`, 'PUT', '{"applications":[]}');
      expect(put).toMatchObject({ status: 200, body: '{"ok":true}', headers: { 'x-head': 'a' } });
      expect((await call(`${base}/api/version`)).status).toBe(418);
      expect(seen).toEqual([
        { method: 'PUT', url: '/api/serve/applications/?x=1', body: '{"applications":[]}', auth: 'Bearer t' },
        { method: 'GET', url: '/api/version', body: '', auth: 'Bearer t' },
      ]);
      const unbound = await call(`${proxy.template.replace('{namespace}', 'e2e').replace('{cluster}', 'other-xxxxx')}/api/version`);
      expect(unbound.status).toBe(503);
      expect(unbound.body).toContain('no Ray head is bound to RayCluster e2e/other-xxxxx');
      expect((await call(proxy.template.replace(/\/api\/v1.*$/, '/elsewhere'))).status).toBe(404);
      expect({ forwarded: proxy.forwarded, refused: proxy.refused }).toEqual({ forwarded: 2, refused: 2 });
    } finally {
      await proxy.close();
      head.closeAllConnections();
      await new Promise((r) => head.close(r));
    }
  });
});
