/**
 * The keep-alive pool of the plain-HTTP clients (lib/runtime/net/connection-pool.ts) with
 * `boundedRequest`, against a local Node HTTP server that counts connections: requests share one
 * connection; a request that meets a pooled connection the server closed is sent once more on a new
 * one; a fresh connection's reset is an error, never a second send; an idle connection is closed
 * by the pool, not by the server.
 */
import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { BoundedRequestError, boundedRequest } from '../../lib/runtime/net/bounded-request';
import { ConnectionPool } from '../../lib/runtime/net/connection-pool';

interface Counting {
  readonly url: URL;
  /** Connections accepted so far. */
  connections(): number;
  /** Requests received so far. */
  requests(): number;
  /** Resolves when a connection closes. */
  closed(): Promise<void>;
  stop(): Promise<void>;
}

/** A server answering `ok`, except where `drop(nth request on its connection)` says to close the connection unanswered. */
async function countingServer(drop: (nthOnConnection: number) => boolean = () => false): Promise<Counting> {
  let connections = 0;
  let requests = 0;
  const perSocket = new WeakMap<Socket, number>();
  const closeWaiters: Array<() => void> = [];
  const server = http.createServer((req, res) => {
    requests++;
    const n = (perSocket.get(req.socket) ?? 0) + 1;
    perSocket.set(req.socket, n);
    if (drop(n)) {
      req.socket.destroy();
      return;
    }
    res.end('ok');
  });
  server.keepAliveTimeout = 600_000; // only the client side closes idle connections here
  server.on('connection', (s: Socket) => {
    connections++;
    s.on('close', () => closeWaiters.splice(0).forEach((w) => w()));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}/api/serve/applications/`),
    connections: () => connections,
    requests: () => requests,
    closed: () => new Promise<void>((r) => closeWaiters.push(r)),
    stop: () => new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    }),
  };
}

const GET = { method: 'GET', headers: {}, timeoutMs: 30_000, maxBodyBytes: 1024 };

test('with the pool, sequential requests to one dashboard share one connection; without it, each opens its own', async () => {
  const s = await countingServer();
  const pool = new ConnectionPool();
  try {
    for (let i = 0; i < 5; i++) expect((await boundedRequest(s.url, { ...GET, agent: pool.agentFor(s.url) })).body).toBe('ok');
    expect(s.connections()).toBe(1);
    for (let i = 0; i < 3; i++) await boundedRequest(s.url, GET);
    expect(s.connections()).toBe(4);
  } finally {
    pool.close();
    await s.stop();
  }
});

test('a request that meets a pooled connection the server closed is sent once more, on a new connection', async () => {
  const s = await countingServer((n) => n === 2); // the second request on any connection finds it closed
  const pool = new ConnectionPool();
  try {
    expect((await boundedRequest(s.url, { ...GET, agent: pool.agentFor(s.url) })).body).toBe('ok');
    expect((await boundedRequest(s.url, { ...GET, agent: pool.agentFor(s.url) })).body).toBe('ok');
    expect({ connections: s.connections(), requests: s.requests() }).toEqual({ connections: 2, requests: 3 });
  } finally {
    pool.close();
    await s.stop();
  }
});

test("a fresh connection's reset is an error after one send: only a pooled connection's is sent again", async () => {
  const s = await countingServer(() => true);
  const pool = new ConnectionPool();
  try {
    const err = await boundedRequest(s.url, { ...GET, agent: pool.agentFor(s.url) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BoundedRequestError);
    expect((err as BoundedRequestError).kind).toBe('network');
    expect((err as BoundedRequestError).message).toBe('failed: ECONNRESET');
    expect(s.requests()).toBe(1);
  } finally {
    pool.close();
    await s.stop();
  }
});

test('an idle connection is closed by the pool (the server keeps its own for ten minutes)', async () => {
  const s = await countingServer();
  const pool = new ConnectionPool();
  try {
    const closed = s.closed();
    await boundedRequest(s.url, { ...GET, agent: pool.agentFor(s.url) });
    await closed;
    await boundedRequest(s.url, { ...GET, agent: pool.agentFor(s.url) });
    expect(s.connections()).toBe(2);
  } finally {
    pool.close();
    await s.stop();
  }
});
