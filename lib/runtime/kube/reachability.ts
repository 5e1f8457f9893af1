/**
 * Whether the API server answers, as seen by one client's own requests, and a signal when it comes
 * back. Informers back off exponentially while the server is away (up to 30 s, as client-go's
 * reflectors do); without this signal each would learn that the server is back only at the end of its
 * own backoff, so after a restart the slowest informer, not the first successful request, would decide
 * when a controller sees the world again. With it, the first 2xx answer after a network failure wakes
 * every informer of the client at once.
 *
 * A network failure (`KubeConnectionError`) marks the server unreachable; a 2xx answer marks it
 * reachable. Other answers (a 503 while kube-apiserver starts, a 404, a 409) change nothing: they say
 * the server listens but not that it serves.
 */
import { KubeConnectionError } from './errors';
import type { HttpRequest, HttpResponse, StreamHandle, Transport } from './transport';

/** The reachability of one API server through one transport. */
export class Reachability {
  #reachable = true;
  readonly #listeners = new Set<() => void>();

  /** False from a network failure until the next 2xx answer. */
  get reachable(): boolean {
    return this.#reachable;
  }

  /** Calls `listener` once, at the next change from unreachable to reachable; returns its cancel. */
  onceRestored(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Records a network failure. */
  #failed(): void {
    this.#reachable = false;
  }

  /** Records a 2xx answer; wakes the waiting listeners if the server was unreachable. */
  #answered(): void {
    if (this.#reachable) return;
    this.#reachable = true;
    const listeners = [...this.#listeners];
    this.#listeners.clear();
    for (const l of listeners) l();
  }

  /** `transport`, with every request and stream recorded here. */
  track(transport: Transport): Transport {
    const observe = <T extends { status: number }>(p: Promise<T>): Promise<T> =>
      p.then(
        (res) => {
          if (res.status >= 200 && res.status < 300) this.#answered();
          return res;
        },
        (err: unknown) => {
          if (err instanceof KubeConnectionError) this.#failed();
          throw err;
        },
      );
    return {
      get server() {
        return transport.server;
      },
      request: (req: HttpRequest): Promise<HttpResponse> => observe(transport.request(req)),
      stream: async (req: HttpRequest, onLine: (line: string) => void): Promise<StreamHandle> => {
        const handle = await observe(transport.stream(req, onLine));
        handle.done.catch((err: unknown) => {
          if (err instanceof KubeConnectionError) this.#failed();
        });
        return handle;
      },
      close: () => transport.close(),
    };
  }
}
