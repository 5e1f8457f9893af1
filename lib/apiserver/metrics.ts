/** Prometheus metrics of the API server (`/metrics`): calls by RPC, protocol and code, and their latency. */
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** The server's metrics in their own registry. */
export class ApiMetrics {
  /** The registry `/metrics` renders. */
  readonly registry = new Registry();
  readonly #calls = new Counter({
    name: 'rayshift_apiserver_calls_total',
    help: 'RPCs handled, by RPC, protocol (grpc, grpc-web, connect, rest) and code',
    labelNames: ['rpc', 'protocol', 'code'] as const,
    registers: [this.registry],
  });
  readonly #latency = new Histogram({
    name: 'rayshift_apiserver_call_duration_seconds',
    help: 'Time to the response (first message for streams), by RPC and protocol',
    labelNames: ['rpc', 'protocol'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  /** Records one call. */
  observe(rpc: string, protocol: string, code: string, seconds: number): void {
    this.#calls.inc({ rpc, protocol, code });
    this.#latency.observe({ rpc, protocol }, seconds);
  }
}
