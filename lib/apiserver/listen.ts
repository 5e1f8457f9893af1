/**
 * One port for every protocol. With TLS: `http2.createSecureServer({allowHTTP1: true})`, which picks
 * HTTP/2 (gRPC) or HTTP/1.1 (REST, Connect, gRPC-Web) by ALPN. Without TLS (`--insecure-local` only):
 * a TCP server that peeks at the first bytes and hands the connection to an h2c server when they are
 * the HTTP/2 preface, else to an HTTP/1.1 server (Node's cleartext HTTP/2 server does not speak 1.1).
 */
import * as http from 'node:http';
import * as http2 from 'node:http2';
import * as net from 'node:net';

/** A request listener for both HTTP versions. */
export type DualRequestListener = (req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse) => void;

/** TLS material of the server. */
export interface TlsMaterial {
  readonly cert: string | Buffer;
  readonly key: string | Buffer;
}

/** A listening server. */
export interface Listener {
  /** The bound port. */
  readonly port: number;
  /** Stops accepting and closes every connection. */
  close(): Promise<void>;
}

const H2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');

function onListen(server: net.Server, host: string, port: number, close: () => Promise<void>): Promise<Listener> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve({ port: (server.address() as net.AddressInfo).port, close });
    });
  });
}

/** Listens with TLS (HTTP/2 and HTTP/1.1 by ALPN). */
export function listenTls(listener: DualRequestListener, tls: TlsMaterial, host: string, port: number): Promise<Listener> {
  const server = http2.createSecureServer({ cert: tls.cert, key: tls.key, allowHTTP1: true }, listener);
  const sessions = new Set<http2.ServerHttp2Session>();
  const sockets = new Set<net.Socket>();
  server.on('session', (s) => {
    sessions.add(s);
    s.on('close', () => sessions.delete(s));
  });
  server.on('secureConnection', (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  return onListen(server, host, port, async () => {
    const closed = new Promise<void>((r) => server.close(() => r()));
    for (const s of sessions) s.destroy();
    for (const s of sockets) s.destroy();
    await closed;
  });
}

/** Listens in cleartext, HTTP/2 (h2c, prior knowledge) and HTTP/1.1 on one port. */
export function listenCleartext(listener: DualRequestListener, host: string, port: number): Promise<Listener> {
  const h1 = http.createServer(listener);
  const h2 = http2.createServer(listener);
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.once('readable', () => {
      const head: Buffer | null = socket.read(Math.min(H2_PREFACE.length, socket.readableLength)) ?? socket.read();
      if (head) socket.unshift(head);
      const isH2 = head !== null && H2_PREFACE.subarray(0, head.length).equals(head);
      (isH2 ? h2 : h1).emit('connection', socket);
    });
  });
  return onListen(server, host, port, async () => {
    const closed = new Promise<void>((r) => server.close(() => r()));
    for (const s of sockets) s.destroy();
    h1.close();
    h2.close();
    await closed;
  });
}
