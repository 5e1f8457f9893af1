/**
 * TEST-ONLY stand-in for a Ray dashboard's Serve REST API, for unit tests of the dashboard client
 * where no Ray head can run. It is a simulation, not Ray: an HTTP server on 127.0.0.1 (port 0)
 * that answers with Ray's JSON shapes (`ServeInstanceDetails`, ray-local.md §2) and walks Ray's
 * state transitions for a `target_capacity` change. This module is the HTTP side; the rest is by
 * concept:
 *
 * - serve-simulator-requests.ts: the browser rule (405) and token auth (401/403) run first, in
 *   the order of the dashboard's middleware chain; public paths stay open.
 * - serve-simulator-validation.ts: `PUT /api/serve/applications/` bodies are checked against
 *   Ray's `ServeDeploySchema` (400 with pydantic's texts).
 * - serve-simulator-state.ts: an accepted config is stored and its top-level `target_capacity`
 *   echoed at once; deployments pick the change up after `controlLoopLagMs` and walk replicas
 *   STARTING → RUNNING → STOPPING with Ray's deployment and application statuses, their replica
 *   targets rounded as Ray does (serve-simulator-capacity.ts).
 * - serve-simulator-details.ts: the GET body, in Ray's `ServeInstanceDetails` shape.
 * - serve-simulator-code.ts: the application code an import path builds.
 * - serve-simulator-placement.ts: with `placement`, the worker Pod each replica and proxy runs on.
 *
 * State advances lazily (on each request and on `releaseReplicas`), so the simulator owns no timers.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SIMULATED_DEFAULT_CODE, SimulatedApplicationCode } from './serve-simulator-code';
import { Json, JsonObject } from './serve-simulator-json';
import { SimulatedServeNode, createSimulatedPlacement } from './serve-simulator-placement';
import { simulatedRequestRejection } from './serve-simulator-requests';
import { createSimulatedServeState } from './serve-simulator-state';
import { validateSimulatedDeploy } from './serve-simulator-validation';

// The options name the importable code, so its types and defaults are exported with them.
export { SIMULATED_DEFAULT_CODE } from './serve-simulator-code';
export type { SimulatedApplicationCode, SimulatedDeploymentCode } from './serve-simulator-code';
export type { SimulatedServeNode } from './serve-simulator-placement';

const SERVE_PATH = '/api/serve/applications/';

/** Options of `startSimulatedServeDashboard`. */
export interface SimulatedServeDashboardOptions {
  /** Enables token auth (`RAY_AUTH_MODE=token`) with this token. */
  readonly token?: string;
  /** Time from a replica's creation to RUNNING. @default 20 */
  readonly replicaStartDelayMs?: number;
  /** Replicas stay STARTING until the test calls `releaseReplicas()`. @default false */
  readonly manualReplicaStart?: boolean;
  /** Time a removed replica stays STOPPING. @default 0 */
  readonly replicaStopDelayMs?: number;
  /** Time before deployments reflect an accepted PUT (the echo of `target_capacity` is immediate). @default 0 */
  readonly controlLoopLagMs?: number;
  /** Importable application code, added to `SIMULATED_DEFAULT_CODE`. */
  readonly code?: { readonly [importPath: string]: SimulatedApplicationCode };
  /**
   * The cluster's Ray nodes (its running Pods) now: replicas then wait for a worker of their own and
   * report it (`node_instance_id`), and workers get proxies (serve-simulator-placement.ts).
   * @default every replica starts at once, on one fixed node
   */
  readonly placement?: () => readonly SimulatedServeNode[];
  /** With `placement`, how long a worker's proxy stays DRAINING once it hosts no replica (Ray: 30 s). @default 30000 */
  readonly proxyDrainMs?: number;
  /** Clock. @default Date.now */
  readonly now?: () => number;
}

/** One request the simulator received. */
export interface SimulatedRequest {
  /** HTTP method. */
  readonly method: string;
  /** Path with query. */
  readonly url: string;
  /** Request headers, names lower-cased. */
  readonly headers: http.IncomingHttpHeaders;
  /** Request body (PUT/POST). */
  readonly body: string;
  /** Status answered; undefined while stalled. */
  status?: number;
}

/** Handle of a running simulator. */
export interface SimulatedServeDashboard {
  /** Base URL, `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Listening port. */
  readonly port: number;
  /** Every request received, in order. */
  readonly requests: readonly SimulatedRequest[];
  /** The top-level `target_capacity` GET would report (null = full capacity or no Serve). */
  targetCapacity(): number | null;
  /** The last accepted PUT body; undefined before the first. */
  config(): JsonObject | undefined;
  /** The body a `GET /api/serve/applications/` would answer now. */
  details(): JsonObject;
  /** Starts waiting STARTING replicas now (manual mode); returns how many. */
  releaseReplicas(filter?: { readonly app?: string; readonly deployment?: string; readonly count?: number }): number;
  /** While true, requests are received but never answered (for client timeouts). */
  setStalled(stalled: boolean): void;
  /** While set, every request is answered 307 with this Location. */
  setRedirect(location: string | undefined): void;
  /** Stops the server, dropping open connections. */
  close(): Promise<void>;
}

/** Starts a simulated Ray dashboard (Serve REST API only) on 127.0.0.1 and a free port. */
export async function startSimulatedServeDashboard(options: SimulatedServeDashboardOptions = {}): Promise<SimulatedServeDashboard> {
  const startDelay = options.replicaStartDelayMs ?? 20;
  const manual = options.manualReplicaStart ?? false;
  const serve = createSimulatedServeState({
    now: options.now ?? Date.now,
    startDelay,
    stopDelay: options.replicaStopDelayMs ?? 0,
    lag: options.controlLoopLagMs ?? 0,
    manual,
    code: { ...SIMULATED_DEFAULT_CODE, ...(options.code ?? {}) },
    ...(options.placement !== undefined ? { placement: createSimulatedPlacement(options.placement, startDelay, manual, options.proxyDrainMs ?? 30_000) } : {}),
  });
  const requests: SimulatedRequest[] = [];
  let stalled = false;
  let redirect: string | undefined;

  const handle = (req: http.IncomingMessage, res: http.ServerResponse, entry: SimulatedRequest): void => {
    const text = (status: number, body: string, type = 'text/plain; charset=utf-8'): void => {
      entry.status = status;
      res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
      res.end(body);
    };
    const json = (status: number, body: Json): void => text(status, JSON.stringify(body), 'application/json; charset=utf-8');
    if (stalled) return;
    if (redirect !== undefined) {
      entry.status = 307;
      res.writeHead(307, { location: redirect, 'content-length': 0 });
      res.end();
      return;
    }
    const url = new URL(req.url ?? '/', 'http://simulated');
    const method = req.method ?? 'GET';
    const rejected = simulatedRequestRejection(method, url.pathname, req.headers, options.token);
    if (rejected !== undefined) return text(rejected[0], rejected[1]);
    if (url.pathname === '/api/gcs_healthz' && method === 'GET') return text(200, 'success');
    // Serve's proxy health (port 8000 on a real head): up once Serve runs, as a head's proxy is.
    if (url.pathname === '/-/healthz' && method === 'GET') return serve.started() ? text(200, 'success') : text(503, 'no Serve proxy is running');
    if (url.pathname === '/api/authentication_mode' && method === 'GET') {
      return json(200, { authentication_mode: options.token === undefined ? 'disabled' : 'token' });
    }
    if (url.pathname !== SERVE_PATH) return text(404, '404: Not Found');
    serve.step();
    if (method === 'GET') {
      const apiType = url.searchParams.get('api_type');
      if (apiType !== null && apiType !== 'declarative' && apiType !== 'imperative') {
        return text(400, `Invalid 'api_type' value: '${apiType}'. Must be one of ['imperative', 'declarative', 'unknown']`);
      }
      return json(200, serve.details(apiType !== 'imperative'));
    }
    if (method === 'DELETE') {
      serve.reset();
      return text(200, '');
    }
    if (method !== 'PUT') {
      res.setHeader('allow', 'GET,PUT,DELETE');
      return text(405, '405: Method Not Allowed');
    }
    let body: JsonObject;
    try {
      body = validateSimulatedDeploy(JSON.parse(entry.body) as unknown);
    } catch (err) {
      if (err instanceof SyntaxError) return text(400, `Expecting value: line 1 column 1 (char 0): ${err.message}`);
      return text(400, (err as Error).message);
    }
    serve.accept(body);
    return text(200, '');
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const entry: SimulatedRequest = { method: req.method ?? 'GET', url: req.url ?? '/', headers: { ...req.headers }, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(entry);
      handle(req, res, entry);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    targetCapacity: () => serve.targetCapacity(),
    config: () => {
      const accepted = serve.accepted();
      return accepted === undefined ? undefined : (JSON.parse(JSON.stringify(accepted)) as JsonObject);
    },
    details: () => {
      serve.step();
      return serve.details();
    },
    releaseReplicas: (filter = {}) => serve.releaseReplicas(filter),
    setStalled: (value) => {
      stalled = value;
    },
    setRedirect: (location) => {
      redirect = location;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
