/**
 * Keep-alive connections for the plain-HTTP clients (the Ray dashboards' Serve API). Without a pool
 * every call opens a TCP connection (and a TLS session for an https dashboard): in the CPU profile of
 * the operator during upgrades (docs/bench.md) opening connections was the heaviest single frame.
 *
 * One agent per scheme, at most `MAX_SOCKETS_PER_HOST` connections to a dashboard, an idle
 * connection closed after `IDLE_MS`: before the 5 s keep-alive of Node's HTTP servers and the 75 s
 * of aiohttp's (the Ray dashboard), so the pool closes an idle connection before the server does. A
 * request that still meets a connection the server closed is sent again once on a new one
 * (`boundedRequest`).
 */
import * as http from 'node:http';
import * as https from 'node:https';

/** Idle time after which the pool closes a connection, ms. */
const IDLE_MS = 4_000;

/** Connections open at once to one host (a dashboard); calls beyond wait for one. */
const MAX_SOCKETS_PER_HOST = 4;

const OPTIONS = { keepAlive: true, maxSockets: MAX_SOCKETS_PER_HOST, maxFreeSockets: MAX_SOCKETS_PER_HOST, timeout: IDLE_MS, scheduling: 'lifo' } as const;

/** See the file comment. */
export class ConnectionPool {
  private readonly plain = new http.Agent(OPTIONS);
  private readonly tls = new https.Agent(OPTIONS);

  /** The agent for `url`'s scheme. */
  agentFor(url: URL): http.Agent {
    return url.protocol === 'https:' ? this.tls : this.plain;
  }

  /** Closes every connection; later calls open new ones. */
  close(): void {
    this.plain.destroy();
    this.tls.destroy();
  }
}
