/**
 * The API server's tunable limits, each with its `rayshift api-server` flag, default and range: the
 * one home of these numbers. `startApiServer` takes each as an option (unset: the default) and the
 * command registers one flag per entry. Free of other modules, so that the CLI can read it without
 * loading the server.
 */

/** One tunable limit: its flag, its default and the inclusive range a flag value must be in. */
export interface ServerLimit {
  /** The `rayshift api-server` flag. */
  readonly flag: string;
  /** Used when the option is unset. */
  readonly default: number;
  /** Smallest accepted value. */
  readonly min: number;
  /** Largest accepted value. */
  readonly max: number;
  /** What the limit does, for `--help`. */
  readonly help: string;
}

/**
 * Every tunable limit of the API server.
 *
 * - `maxBodyBytes`: below 1 KiB not even a small RayService fits; above 16 MiB is far more than
 *   kube-apiserver accepts (3 MiB) and only lets each caller make the server hold more.
 * - `tokenRecheckSeconds`: each open watch costs one TokenReview per interval, and a revoked token
 *   keeps its watch for up to one interval.
 * - `idleTimeoutSeconds`: an HTTP/2 session without a stream costs a socket, a file descriptor and
 *   about 60 KB; a client that wants one stays connected by sending requests (gRPC clients reconnect
 *   on their own).
 * - `http1IdleTimeoutSeconds`: the same for an HTTP/1.1 connection (REST, Connect, gRPC-Web): closed
 *   once it has had no request in flight this long, from its start too. Node's own timeouts close a
 *   silent one only after its headers timeout (about a minute and its checking interval, 63 s
 *   measured), and the TLS server's HTTP/1.1 fallback has no keep-alive timeout at all.
 * - `sessionTimeoutSeconds`: after it the session is told to go away (GOAWAY), so that no client
 *   keeps one session (and its place among `maxSessions`) forever; its open streams still finish.
 * - `maxSessions`: connections (HTTP/2 sessions and HTTP/1.1 connections) open at once; further ones
 *   are closed on arrival. 512 keeps the server within its file-descriptor limit (often 1024) with
 *   room for its own Kubernetes connections, and within the chart's memory limit.
 * - `maxStreamsPerSession`: HTTP/2 `SETTINGS_MAX_CONCURRENT_STREAMS` (Node's default is 2^32 - 1).
 * - `maxWatchesPerCaller`: each watch holds a Kubernetes watch opened as the caller and one
 *   TokenReview per re-check; the dashboard opens one per page it shows.
 */
export const SERVER_LIMITS = {
  maxBodyBytes: { flag: '--max-body-bytes', default: 4 * 1024 * 1024, min: 1024, max: 16 * 1024 * 1024, help: 'largest request body on every protocol, after decompression, bytes' },
  tokenRecheckSeconds: { flag: '--token-recheck-seconds', default: 30, min: 1, max: 600, help: "seconds between re-checks of a watching caller's token" },
  idleTimeoutSeconds: { flag: '--idle-timeout-seconds', default: 60, min: 1, max: 3600, help: 'seconds an HTTP/2 session may stay open without a stream before it is closed' },
  http1IdleTimeoutSeconds: { flag: '--http1-idle-timeout-seconds', default: 60, min: 1, max: 3600, help: 'seconds an HTTP/1.1 connection may stay open without a request in flight before it is closed' },
  sessionTimeoutSeconds: { flag: '--session-timeout-seconds', default: 3600, min: 1, max: 86_400, help: 'seconds after which an HTTP/2 session is told to go away (GOAWAY; its open streams finish)' },
  maxSessions: { flag: '--max-sessions', default: 512, min: 1, max: 100_000, help: 'connections (HTTP/2 sessions and HTTP/1.1 connections) open at once; more are closed on arrival' },
  maxStreamsPerSession: { flag: '--max-streams-per-session', default: 100, min: 1, max: 10_000, help: 'concurrent streams of one HTTP/2 session (SETTINGS_MAX_CONCURRENT_STREAMS)' },
  maxWatchesPerCaller: { flag: '--max-watches-per-caller', default: 16, min: 1, max: 10_000, help: 'upgrade watches one caller may have open at once; more are RESOURCE_EXHAUSTED' },
} as const satisfies Record<string, ServerLimit>;

/** The name of a tunable limit (an option of `startApiServer`). */
export type ServerLimitName = keyof typeof SERVER_LIMITS;

/** Values of the tunable limits; unset ones take their default. */
export type ServerLimitValues = { readonly [K in ServerLimitName]?: number };

/** `value`, or the default of limit `name` when unset. */
export function limitValue(name: ServerLimitName, value: number | undefined): number {
  return value ?? SERVER_LIMITS[name].default;
}
