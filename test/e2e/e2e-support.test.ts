/**
 * Unit tests (run by `npm test`, not the e2e config) of the end-to-end suite's pure parts and its
 * load generator against a local node:http server on loopback.
 */
import * as http from 'node:http';
import * as http2 from 'node:http2';
import { AddressInfo } from 'node:net';
import { perSecondShare, replicaMismatches, shareDecreases, windowShares, ServeSample } from './support/analysis';
import { decodeStrings, encodeStrings, grpcFrame, grpcSender } from './support/grpc-load';
import { LoadSecond, httpSender, startLoad } from './support/load';

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

  test('window shares compare the settled part of each weight window with its weight and skip short windows', () => {
    const history = [
      { at: 0, weights: [{ name: 'a', weight: 100 }, { name: 'b', weight: 0 }] },
      { at: 1000, weights: [{ name: 'a', weight: 75 }, { name: 'b', weight: 25 }] },
      { at: 3000, weights: [{ name: 'b', weight: 100 }] },
    ];
    const requests = [] as { at: number; version?: string }[];
    for (let t = 0; t < 4000; t += 10) {
      const version = t < 1200 ? 'v1' : t < 3200 ? (t % 40 === 0 ? 'v2' : 'v1') : 'v2';
      requests.push({ at: t, version });
    }
    requests.push({ at: 2000 }); // a failure is not an answer
    const w = windowShares(history, requests, 'v2', (b) => b === 'b', { settleMs: 200, endAt: 4000 });
    expect(w.map((x) => [x.expectedPercent, Math.round(x.observedPercent)])).toEqual([[0, 0], [25, 25], [100, 100]]);
    expect(windowShares(history, requests, 'v2', (b) => b === 'b', { settleMs: 990, endAt: 4000, minAnswers: 20 }).map((x) => x.expectedPercent)).toEqual([25]); // 10 ms left of the others
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
  test('offers the rate regardless of answers and counts answers per version, failures and timeouts per second', async () => {
    let n = 0;
    const server = http.createServer((_req, res) => {
      n++;
      if (n % 10 === 0) {
        res.writeHead(503).end();
        return;
      }
      if (n % 10 === 5) return; // never answers: a timeout
      res.writeHead(200, { 'content-type': 'application/json', 'x-rayshift-version': n % 2 ? 'v1' : 'v2' }).end(JSON.stringify({ cluster: 'c' }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const sender = httpSender('127.0.0.1', (server.address() as AddressInfo).port);
    const load = startLoad(sender.send, { ratePerSecond: 100, timeoutMs: 3000, durationMs: 1000, recordRequests: true });
    await new Promise((r) => setTimeout(r, 1100));
    const t = await load.stop();
    sender.close();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    expect(t.sent).toBe(n);
    expect(t.sent).toBeGreaterThanOrEqual(90);
    expect(t.failures).toBe(Math.floor(n / 10));
    expect(t.failureDetails).toEqual({ 'HTTP 503': t.failures });
    expect(t.timeouts).toBe(Math.floor((n + 5) / 10));
    expect(t.ok + t.failures + t.timeouts).toBe(t.sent);
    expect((t.versions.v1 ?? 0) + (t.versions.v2 ?? 0)).toBe(t.ok);
    expect(load.requests.filter((r) => r.version !== undefined)).toHaveLength(t.ok);
  });
});
