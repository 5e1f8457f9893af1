/**
 * The Prometheus client's reading of `/api/v1/query` answers (a table of real answer shapes), and
 * its refusals on the wire: a redirect is not followed, a silent server times out, a closed port
 * fails. The answers of a real Prometheus are tested in test/integration/prometheus.test.ts.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PrometheusQueryError, queryPrometheus, singleNumber } from '../../lib/runtime/prometheus/client';

describe('singleNumber', () => {
  const ok = (resultType: string, result: unknown) => JSON.stringify({ status: 'success', data: { resultType, result } });
  test.each<[string, string, number | undefined]>([
    ['a scalar', ok('scalar', [1700000000.1, '0.25']), 0.25],
    ['a vector of one sample', ok('vector', [{ metric: {}, value: [1700000000, '12.5'] }]), 12.5],
    ['NaN (0/0)', ok('vector', [{ metric: {}, value: [1700000000, 'NaN'] }]), NaN],
    ['+Inf', ok('vector', [{ metric: {}, value: [1700000000, '+Inf'] }]), Infinity],
    ['an empty vector', ok('vector', []), undefined],
  ])('%s', (_name, body, value) => {
    expect(singleNumber(200, body)).toBe(value);
  });

  test.each([
    ['several series', ok2(), 'the query gave 2 series; it must give one (aggregate it, e.g. with sum(...))'],
    ['a matrix', JSON.stringify({ status: 'success', data: { resultType: 'matrix', result: [] } }), 'the query gave a matrix; it must give a scalar or a vector of one series'],
    ['a PromQL error', JSON.stringify({ status: 'error', errorType: 'bad_data', error: 'parse error at char 5' }), 'Prometheus answered HTTP 400: bad_data: parse error at char 5'],
    ['HTML', '<html>proxy error</html>', 'Prometheus answered HTTP 400 with a body that is not JSON: <html>proxy error</html>'],
  ])('%s is an error that says so', (_name, body, message) => {
    expect(() => singleNumber(400, body)).toThrow(new PrometheusQueryError(message));
  });

  function ok2(): string {
    return JSON.stringify({ status: 'success', data: { resultType: 'vector', result: [{ metric: { a: '1' }, value: [1, '1'] }, { metric: { a: '2' }, value: [1, '2'] }] } });
  }
});

describe('queryPrometheus on the wire', () => {
  let server: http.Server;
  let base: string;
  let handler: (req: http.IncomingMessage, res: http.ServerResponse) => void;
  const seen: { method?: string; url?: string; body: string }[] = [];
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen.push({ method: req.method, url: req.url, body });
        handler(req, res);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  test('posts the query form to <url>/api/v1/query, keeping a path prefix', async () => {
    handler = (_q, res) => res.end(JSON.stringify({ status: 'success', data: { resultType: 'scalar', result: [1, '3'] } }));
    await expect(queryPrometheus(`${base}/prom`, 'sum(up{job="ray"})', 2000)).resolves.toBe(3);
    expect(seen.at(-1)).toEqual({ method: 'POST', url: '/prom/api/v1/query', body: 'query=sum%28up%7Bjob%3D%22ray%22%7D%29' });
  });

  test('a redirect is not followed', async () => {
    handler = (_q, res) => res.writeHead(302, { location: 'http://elsewhere.example/' }).end();
    await expect(queryPrometheus(base, 'up', 2000)).rejects.toThrow(`Prometheus at ${base}: answered a redirect (HTTP 302), which is not followed; configure the final address`);
  });

  test('a server that does not answer in time fails with the timeout', async () => {
    handler = () => undefined;
    await expect(queryPrometheus(base, 'up', 200)).rejects.toThrow(`Prometheus at ${base}: no answer within 200 ms`);
  });

  test('a closed port fails', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    await expect(queryPrometheus(`http://127.0.0.1:${port}`, 'up', 2000)).rejects.toThrow(/ECONNREFUSED/);
  });
});
