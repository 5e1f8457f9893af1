/**
 * The tests' Prometheus server is real: upstream Prometheus 3 built from Go modules
 * (`npm run prometheus:build`, test/prometheus/), started by test/support/prometheus.ts. A tiny
 * loopback HTTP server serves a counter in the text exposition format; Prometheus scrapes it, and
 * its query API returns exactly the value served, before and after the counter moves. Needs no
 * control plane.
 */
import * as http from 'node:http';
import * as net from 'node:net';
import { RunningPrometheus, startPrometheus } from '../support/prometheus';

const JOB = 'rayshift-test';
const METRICS_PATH = '/stats/prometheus';

/** A target: serves `rayshift_test_requests_total{code="200"}` with the current `value`. */
class CounterTarget {
  value = 0;
  /** User-Agent of each scrape. */
  readonly scrapes: string[] = [];
  private readonly server = http.createServer((req, res) => {
    if (req.method !== 'GET' || new URL(req.url ?? '/', 'http://x').pathname !== METRICS_PATH) {
      res.writeHead(404).end();
      return;
    }
    this.scrapes.push(req.headers['user-agent'] ?? '');
    res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' });
    res.end(
      [
        '# HELP rayshift_test_requests_total Requests the test target counted.',
        '# TYPE rayshift_test_requests_total counter',
        `rayshift_test_requests_total{code="200"} ${this.value}`,
        '',
      ].join('\n'),
    );
  });

  async listen(): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', resolve);
    });
    return `127.0.0.1:${(this.server.address() as net.AddressInfo).port}`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

interface VectorSample {
  readonly metric: Record<string, string>;
  readonly value: [number, string];
}

/** `GET /api/v1/query` of `expr`: the instant vector. */
async function query(prom: RunningPrometheus, expr: string): Promise<VectorSample[]> {
  const r = await fetch(`${prom.address}/api/v1/query?query=${encodeURIComponent(expr)}`);
  const body = (await r.json()) as { status: string; error?: string; data: { resultType: string; result: VectorSample[] } };
  expect({ http: r.status, status: body.status, error: body.error }).toEqual({ http: 200, status: 'success', error: undefined });
  expect(body.data.resultType).toBe('vector');
  return body.data.result;
}

let target: CounterTarget;
let address: string;
let prom: RunningPrometheus | undefined;

beforeAll(async () => {
  target = new CounterTarget();
  address = await target.listen();
  prom = await startPrometheus({ targets: { [JOB]: [address] }, metricsPath: METRICS_PATH, scrapeInterval: '1s' });
}, 120_000);

afterAll(async () => {
  await prom?.stop();
  await target?.close();
});

test('Prometheus scrapes the target and its query API returns the served counter, before and after it moves', async () => {
  const p = prom!;
  target.value = 41;
  let changed = Date.now();
  await p.waitForScrape(JOB, { after: changed });
  expect(target.scrapes.length).toBeGreaterThan(0);
  expect(target.scrapes[0]).toMatch(/^Prometheus\//);

  expect(await query(p, 'rayshift_test_requests_total')).toEqual([
    {
      metric: { __name__: 'rayshift_test_requests_total', code: '200', instance: address, job: JOB },
      value: [expect.any(Number), '41'],
    },
  ]);

  // The target counts 17 more requests; once a scrape started after that, the query sees 58.
  target.value += 17;
  changed = Date.now();
  await p.waitForScrape(JOB, { after: changed });
  const after = await query(p, 'rayshift_test_requests_total{code="200"}');
  expect(after.map((s) => [s.metric.job, s.metric.instance, s.value[1]])).toEqual([[JOB, address, '58']]);

  // Only what was served: no series for another code, and `up` is 1 for the target.
  expect(await query(p, 'rayshift_test_requests_total{code="500"}')).toEqual([]);
  expect((await query(p, `up{job="${JOB}"}`)).map((s) => s.value[1])).toEqual(['1']);
});
