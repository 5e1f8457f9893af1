/**
 * TEST-ONLY network partition: a TCP proxy in front of a server (kube-apiserver) that can be cut
 * and healed. Cut, it resets every open connection and every new one, as a replica partitioned
 * from the API server sees it; TLS passes through untouched (127.0.0.1 is in the test PKI's names).
 */
import * as net from 'node:net';

/** See the file comment. */
export class CuttableProxy {
  private readonly sockets = new Set<net.Socket>();
  private isCut = false;

  private constructor(private readonly server: net.Server, private readonly target: { host: string; port: number }) {
    server.on('connection', (client) => this.accept(client));
  }

  /** A proxy to `targetUrl` (`https://127.0.0.1:<port>`), listening on a free port of 127.0.0.1. */
  static async start(targetUrl: string): Promise<CuttableProxy> {
    const u = new URL(targetUrl);
    const proxy = new CuttableProxy(net.createServer(), { host: u.hostname, port: Number(u.port) });
    await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  /** `https://127.0.0.1:<port>` of the proxy. */
  get url(): string {
    return `https://127.0.0.1:${(this.server.address() as net.AddressInfo).port}`;
  }

  /** Resets every connection, and every new one until `heal`. */
  cut(): void {
    this.isCut = true;
    for (const s of this.sockets) s.destroy();
  }

  /** Lets connections through again. */
  heal(): void {
    this.isCut = false;
  }

  /** Stops listening and drops every connection. */
  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: net.Socket): void {
    if (this.isCut) {
      client.destroy();
      return;
    }
    const upstream = net.connect(this.target.port, this.target.host);
    for (const [a, b] of [[client, upstream], [upstream, client]] as const) {
      this.sockets.add(a);
      a.on('error', () => b.destroy());
      a.on('close', () => {
        this.sockets.delete(a);
        b.destroy();
      });
      a.pipe(b);
    }
  }
}
