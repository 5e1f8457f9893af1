/**
 * A `Transport` that lets at most `limit` ordinary requests run at once and queues the rest (watch
 * streams are not limited). A burst of calls from one caller then reuses a few keep-alive
 * connections to the Kubernetes API instead of opening one TLS connection per call.
 */
import type { HttpRequest, HttpResponse, StreamHandle, Transport } from '../../runtime/kube/transport';

/** Wraps `inner`, bounding its concurrent requests. */
export class LimitedTransport implements Transport {
  readonly #waiting: (() => void)[] = [];
  #running = 0;

  /** @param limit the most requests of `inner` running at once */
  constructor(
    private readonly inner: Transport,
    private readonly limit: number,
  ) {}

  /** The inner transport's server. */
  get server(): string {
    return this.inner.server;
  }

  /** Runs `req` once fewer than `limit` requests are running. */
  async request(req: HttpRequest): Promise<HttpResponse> {
    if (this.#running >= this.limit) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    this.#running++;
    try {
      return await this.inner.request(req);
    } finally {
      this.#running--;
      this.#waiting.shift()?.();
    }
  }

  /** Opens a stream at once (not limited). */
  stream(req: HttpRequest, onLine: (line: string) => void): Promise<StreamHandle> {
    return this.inner.stream(req, onLine);
  }

  /** Closes the inner transport. */
  close(): void {
    this.inner.close();
  }
}
