/**
 * The HTTP side of the TEST-ONLY simulated metrics: a loopback endpoint answering every request
 * with the lines `render` gives at that moment, in Prometheus' text format, for a real Prometheus
 * to scrape. One home for it; what the lines count is each simulation's own.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A running endpoint. */
export interface MetricsEndpoint {
  /** `127.0.0.1:<port>`, a Prometheus scrape target. */
  readonly target: string;
  close(): Promise<void>;
}

/** Serves `render()`'s lines on a free loopback port. */
export async function serveMetrics(render: () => readonly string[]): Promise<MetricsEndpoint> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(`${render().join('\n')}\n`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    target: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
