/**
 * SIMULATED prefill and decode workers of one release, for tests that run the real sglang-router in
 * PD mode (no GPU, no model here). Each answers what sglang-router 0.3.2 calls on a worker (observed
 * by running it): `GET /health`, `/server_info`, `/model_info` at registration, then `POST
 * /generate` on the prefill and the decode it paired, both with the same `bootstrap_host`,
 * `bootstrap_port` and `bootstrap_room`. A simulated prefill also serves its bootstrap port, where the
 * decode "receives the KV cache": the decode asks it which release made the room, as a real KV
 * transfer would only work between matching releases. Every served request is recorded with the
 * prefill and decode that served it and their releases. A worker listens on 127.0.0.1 at free ports,
 * or at a given address (a Pod's IP and the ports its router is told, test/support/
 * pd-workers-at-pod-ips.ts). Imports nothing of lib/.
 */
import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** One request as the decode served it. */
export interface ServedPair {
  readonly room: string;
  readonly prefill: string;
  readonly prefillRelease: string;
  readonly decode: string;
  readonly decodeRelease: string;
}

/** A running simulated worker. */
export interface SimulatedWorker {
  readonly role: 'prefill' | 'decode';
  readonly release: string;
  /** `http://<host>:<port>` */
  readonly url: string;
  /** The prefill's bootstrap port (prefill only). */
  readonly bootstrapPort?: number;
  /**
   * Takes no new connection and resolves once every request it was sent is answered (a Pod that
   * goes away drains); a prefill's bootstrap port also stays until every room it prefilled has been
   * asked for by its decode, or for at most 10 s. Then its ports are free.
   */
  drain(): Promise<void>;
  /** Closes at once, connections included. */
  close(): Promise<void>;
}

/** Where a worker listens: a host (a Pod's IP) and its ports. */
export interface WorkerAddress {
  readonly host: string;
  readonly port: number;
  /** The prefill's bootstrap port. */
  readonly bootstrapPort?: number;
}

/** How long a draining prefill keeps its bootstrap port for rooms no decode asked for yet (twice a decode's wait). */
const UNASKED_ROOM_MS = 10_000;

/** Largest request body a simulated worker reads; the router's are well under 2 KB. */
const MAX_BODY = 64 * 1024;

function listen(server: http.Server, host = '127.0.0.1', port = 0): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });
}

/**
 * The drain of `server` (call at its creation): the returned function stops it taking connections
 * and resolves once the requests it was answering are answered; then it ends every connection left
 * (keep-alive ones, and the router's which carry no HTTP/1 request, e.g. its gRPC probe's).
 */
function drainable(server: http.Server): () => Promise<void> {
  let draining = false;
  const open = new Set<http.ServerResponse>();
  const sockets = new Set<Socket>();
  let answered: (() => void) | undefined;
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.on('request', (_req, res: http.ServerResponse) => {
    if (draining && !res.headersSent) res.setHeader('connection', 'close');
    open.add(res);
    res.once('close', () => {
      open.delete(res);
      if (open.size === 0) answered?.();
    });
  });
  return async () => {
    draining = true;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    if (open.size > 0) await new Promise<void>((resolve) => (answered = resolve));
    sockets.forEach((s) => s.destroy());
    await closed;
  };
}

/** Closes `servers` at once, connections included (a router keeps them alive: close() alone would wait for it). */
async function closeNow(...servers: http.Server[]): Promise<void> {
  await Promise.all(servers.map((s) => new Promise((r) => (s.close(r), s.closeAllConnections()))));
}

function readJson(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString('utf8');
      if (body.length > MAX_BODY) req.destroy(new Error('request body too large'));
    });
    req.on('end', () => {
      try {
        resolve(body === '' ? {} : JSON.parse(body));
      } catch (e) {
        reject(e);
      }
    });
    req.on('error', reject);
  });
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** The GETs every worker answers at registration; false when `url` is none of them. */
function registration(url: string, res: http.ServerResponse, release: string): boolean {
  if (url === '/health' || url === '/health_generate') send(res, 200, {});
  else if (url === '/server_info' || url === '/get_server_info') send(res, 200, { release });
  else if (url === '/model_info' || url === '/get_model_info') send(res, 200, { model_path: `simulated-${release}`, is_generation: true });
  else return false;
  return true;
}

/** Starts a simulated prefill of `release` (at `at`): its HTTP port and its bootstrap port, which tells a decode the release of each room it prefilled. */
export async function startSimulatedPrefill(name: string, release: string, at?: WorkerAddress): Promise<SimulatedWorker & { bootstrapPort: number }> {
  const rooms = new Map<string, string>();
  // Rooms prefilled and not yet asked for by their decode: a draining prefill keeps its bootstrap port until none is left.
  const unasked = new Set<string>();
  let allAsked: (() => void) | undefined;
  // The router sends the prefill and the decode their requests at once: a decode's handshake may come
  // first and waits for the room's prefill (as a real decode waits for the KV cache), up to 5 s.
  const waiting = new Map<string, (() => void)[]>();
  const bootstrap = http.createServer((req, res) => {
    const room = new URL(req.url ?? '/', 'http://x').searchParams.get('room') ?? '';
    const answer = () => {
      if (!rooms.has(room)) return send(res, 404, { error: `room ${room} was not prefilled by ${name}` });
      unasked.delete(room);
      if (unasked.size === 0) allAsked?.();
      send(res, 200, { prefill: name, release: rooms.get(room) });
    };
    if (rooms.has(room)) return answer();
    const timer = setTimeout(answer, 5_000);
    waiting.set(room, [...(waiting.get(room) ?? []), () => (clearTimeout(timer), answer())]);
  });
  const server = http.createServer((req, res) => {
    if (req.method === 'GET' && registration(req.url ?? '', res, release)) return;
    if (req.method !== 'POST' || req.url !== '/generate') return send(res, 404, { error: `${req.method} ${req.url}` });
    readJson(req).then(
      (body) => {
        const room = String(body.bootstrap_room);
        rooms.set(room, release);
        unasked.add(room);
        for (const wake of waiting.get(room) ?? []) wake();
        waiting.delete(room);
        send(res, 200, { text: '', meta_info: { prefill: name } });
      },
      (e: Error) => send(res, 400, { error: e.message }),
    );
  });
  const [drainHttp, drainBootstrap] = [drainable(server), drainable(bootstrap)];
  const host = at?.host ?? '127.0.0.1';
  const [port, bootstrapPort] = await Promise.all([listen(server, host, at?.port), listen(bootstrap, host, at?.bootstrapPort)]);
  return {
    role: 'prefill',
    release,
    url: `http://${host}:${port}`,
    bootstrapPort,
    drain: async () => {
      await drainHttp();
      // A room its decode has not asked for within UNASKED_ROOM_MS never will be (that request
      // failed on its decode's side); a real prefill frees such KV cache after its own timeout.
      if (unasked.size > 0) await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, UNASKED_ROOM_MS);
        allAsked = () => (clearTimeout(timer), resolve());
      });
      await drainBootstrap();
    },
    close: () => closeNow(server, bootstrap),
  };
}

/** GET one JSON answer from the prefill's bootstrap port (the simulated KV handshake). */
function handshake(host: string, port: number, room: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host, port, path: `/room?room=${encodeURIComponent(room)}`, timeout: 5_000, agent: false }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString('utf8')));
      res.on('end', () => {
        try {
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) });
        } catch {
          // A prefill closed mid-answer: the KV transfer failed, as a real one would.
          resolve({ status: 502, body: { error: `bootstrap answered HTTP ${res.statusCode} with ${JSON.stringify(text.slice(0, 100))}` } });
        }
      });
    });
    req.on('timeout', () => req.destroy(new Error('bootstrap handshake timed out')));
    req.on('error', reject);
  });
}

/**
 * Starts a simulated decode of `release` that appends every request it serves to `served`: it asks
 * the prefill at the request's bootstrap address which release prefilled the room, and serves the
 * answer either way (a mixed pair is the wrong answer a real mismatch could give, recorded as such).
 */
export async function startSimulatedDecode(name: string, release: string, served: ServedPair[], at?: WorkerAddress): Promise<SimulatedWorker> {
  const server = http.createServer((req, res) => {
    if (req.method === 'GET' && registration(req.url ?? '', res, release)) return;
    if (req.method !== 'POST' || req.url !== '/generate') return send(res, 404, { error: `${req.method} ${req.url}` });
    readJson(req)
      .then(async (body) => {
        const room = String(body.bootstrap_room);
        const from = await handshake(String(body.bootstrap_host), Number(body.bootstrap_port), room);
        if (from.status !== 200) return send(res, 502, { error: `KV handshake: ${from.body.error}` });
        served.push({ room, prefill: from.body.prefill, prefillRelease: from.body.release, decode: name, decodeRelease: release });
        send(res, 200, { text: `${from.body.release}+${release}`, meta_info: { prefill: from.body.prefill, decode: name } });
      })
      .catch((e: Error) => send(res, 500, { error: e.message }));
  });
  const drain = drainable(server);
  const host = at?.host ?? '127.0.0.1';
  const port = await listen(server, host, at?.port);
  return { role: 'decode', release, url: `http://${host}:${port}`, drain, close: () => closeNow(server) };
}
