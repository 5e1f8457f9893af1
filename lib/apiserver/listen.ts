/**
 * One port for every protocol. With TLS: `http2.createSecureServer({allowHTTP1: true})`, which picks
 * HTTP/2 (gRPC) or HTTP/1.1 (REST, Connect, gRPC-Web) by ALPN. Without TLS (`--insecure-local` only):
 * a TCP server that peeks at the first bytes and hands the connection to an h2c server when they are
 * the HTTP/2 preface, else to an HTTP/1.1 server (Node's cleartext HTTP/2 server does not speak 1.1).
 * Both bound what idle and long-lived clients can hold (`ConnectionLimits`), on either HTTP version.
 */
import * as http from 'node:http';
import * as http2 from 'node:http2';
import * as net from 'node:net';
import type * as tls from 'node:tls';

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

/** What one client connection may hold, and for how long (`SERVER_LIMITS` documents each). */
export interface ConnectionLimits {
  /** An HTTP/2 session with no open stream for this long is closed, ms. */
  readonly idleTimeoutMs: number;
  /** An HTTP/1.1 connection with no request in flight for this long is closed, ms. */
  readonly http1IdleTimeoutMs: number;
  /** An HTTP/2 session this old is sent GOAWAY (its open streams finish), ms. */
  readonly sessionTimeoutMs: number;
  /** Connections open at once; more are closed on arrival. */
  readonly maxSessions: number;
  /** Concurrent streams of one HTTP/2 session. */
  readonly maxStreamsPerSession: number;
}

/**
 * Closes `session` once it has had no open stream for `idleTimeoutMs` (from its start too, so a
 * client that connects and sends nothing is closed), and sends it GOAWAY at `sessionTimeoutMs`.
 * Node's own `timeout` would count any frame (a PING, a heartbeat of a watch) as activity and close
 * sessions with a quiet watch; this counts streams.
 */
function limitSession(session: http2.ServerHttp2Session, limits: ConnectionLimits): void {
  let open = 0;
  let idle: NodeJS.Timeout | undefined;
  const close = () => session.close();
  const arm = () => {
    idle = setTimeout(close, limits.idleTimeoutMs);
    idle.unref();
  };
  const age = setTimeout(close, limits.sessionTimeoutMs);
  age.unref();
  arm();
  session.on('stream', (stream) => {
    open++;
    clearTimeout(idle);
    stream.once('close', () => {
      if (--open === 0 && !session.closed && !session.destroyed) arm();
    });
  });
  session.once('close', () => {
    clearTimeout(idle);
    clearTimeout(age);
  });
}

/**
 * Closes HTTP/1.1 connections once they have had no request in flight for `idleTimeoutMs` (from
 * their start too). Node's socket timeout would count bytes, so a slow upload or a quiet event
 * stream would look busy or idle by accident; this counts requests, as `limitSession` counts streams.
 */
class Http1IdleLimit {
  readonly #inFlight = new WeakMap<net.Socket, { open: number; idle?: NodeJS.Timeout }>();

  constructor(private readonly idleTimeoutMs: number) {}

  /** Starts the idle clock of a new HTTP/1.1 connection. */
  connection(socket: net.Socket): void {
    const state: { open: number; idle?: NodeJS.Timeout } = { open: 0 };
    this.#inFlight.set(socket, state);
    this.#arm(socket, state);
    socket.once('close', () => clearTimeout(state.idle));
  }

  /** Stops the clock of a connection that turned out to be HTTP/2 (its session has its own limits). */
  notHttp1(socket: net.Socket): void {
    clearTimeout(this.#inFlight.get(socket)?.idle);
    this.#inFlight.delete(socket);
  }

  /** Wraps `listener` so that each HTTP/1.1 request stops its connection's idle clock until it is answered. */
  wrap(listener: DualRequestListener): DualRequestListener {
    return (req, res) => {
      // Held here: Node detaches the socket from the request once it is done.
      const socket = req.socket;
      const state = req.httpVersionMajor === 1 ? this.#inFlight.get(socket) : undefined;
      if (state) {
        state.open++;
        clearTimeout(state.idle);
        res.once('close', () => {
          if (--state.open === 0 && !socket.destroyed) this.#arm(socket, state);
        });
      }
      listener(req, res);
    };
  }

  #arm(socket: net.Socket, state: { idle?: NodeJS.Timeout }): void {
    state.idle = setTimeout(() => socket.destroy(), this.idleTimeoutMs);
    state.idle.unref();
  }
}

/** The HTTP/2 settings `limits` imply. */
function h2Settings(limits: ConnectionLimits): http2.Settings {
  return { maxConcurrentStreams: limits.maxStreamsPerSession };
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
export function listenTls(listener: DualRequestListener, tls: TlsMaterial, host: string, port: number, limits: ConnectionLimits): Promise<Listener> {
  const http1 = new Http1IdleLimit(limits.http1IdleTimeoutMs);
  const server = http2.createSecureServer({ cert: tls.cert, key: tls.key, allowHTTP1: true, settings: h2Settings(limits) }, http1.wrap(listener));
  // Counted per TCP connection, before the TLS handshake: one limit for both HTTP versions.
  server.maxConnections = limits.maxSessions;
  const sessions = new Set<http2.ServerHttp2Session>();
  const sockets = new Set<net.Socket>();
  server.on('session', (s) => {
    limitSession(s, limits);
    sessions.add(s);
    s.on('close', () => sessions.delete(s));
  });
  server.on('secureConnection', (s: tls.TLSSocket) => {
    if (s.alpnProtocol !== 'h2') http1.connection(s);
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
export function listenCleartext(listener: DualRequestListener, host: string, port: number, limits: ConnectionLimits): Promise<Listener> {
  const http1 = new Http1IdleLimit(limits.http1IdleTimeoutMs);
  const h1 = http.createServer(http1.wrap(listener));
  const h2 = http2.createServer({ settings: h2Settings(limits) }, listener);
  h2.on('session', (s) => limitSession(s, limits));
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    // Clocked from arrival: a client that sends nothing is never told apart, and is closed as idle HTTP/1.1.
    http1.connection(socket);
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.once('readable', () => {
      const head: Buffer | null = socket.read(Math.min(H2_PREFACE.length, socket.readableLength)) ?? socket.read();
      if (head) socket.unshift(head);
      const isH2 = head !== null && H2_PREFACE.subarray(0, head.length).equals(head);
      if (isH2) http1.notHttp1(socket);
      (isH2 ? h2 : h1).emit('connection', socket);
    });
  });
  server.maxConnections = limits.maxSessions;
  return onListen(server, host, port, async () => {
    const closed = new Promise<void>((r) => server.close(() => r()));
    for (const s of sockets) s.destroy();
    h1.close();
    h2.close();
    await closed;
  });
}
