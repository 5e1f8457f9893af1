/**
 * TEST-ONLY stand-in for Prometheus's query API: every instant query (`POST /api/v1/query`, what
 * the operator's analysis sends) is answered with one sample of the value the test sets at that
 * moment, so a metric gate measures a known number against its bound. Used by the dashboard's browser test and the
 * dashboard figure script; not a Prometheus (no scraping, no PromQL).
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A running stand-in. */
export interface StubPrometheus {
  /** `http://127.0.0.1:<port>`, for `analysis.prometheusUrl`. */
  readonly url: string;
  /** Queries answered so far. */
  queries(): number;
  close(): Promise<void>;
}

/** Starts a stand-in answering every query with `value()` on a free loopback port. */
export async function startStubPrometheus(value: () => number): Promise<StubPrometheus> {
  let answered = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/api/v1/query') {
        res.writeHead(404).end();
        return;
      }
      answered++;
      const body = { status: 'success', data: { resultType: 'vector', result: [{ metric: {}, value: [Date.now() / 1000, String(value())] }] } };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    queries: () => answered,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
