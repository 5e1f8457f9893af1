/**
 * The options with which the RayService verbs of the CLI (`status` and the steering verbs: `pause`,
 * `resume`, `promote`, `abort`, `rollback`, `retry-analysis`, `skip-analysis`) go through a rayshift API server instead of the Kubernetes API, and the
 * bearer token they send (from `--token`, `--token-file` or `$RAYSHIFT_TOKEN`; never printed, and
 * never sent in cleartext beyond this machine without `--allow-plaintext-token`).
 * Free of the client's modules, so that registering the options costs the CLI's start nothing.
 */
import * as fs from 'node:fs';
import type { Command } from 'commander';
import { isLoopbackHost } from '../runtime/net/loopback';

/** The options that select and reach an API server. */
export interface ApiConnectionOptions {
  /** URL of the rayshift API server; unset: the Kubernetes API through a kubeconfig. */
  readonly apiServer?: string;
  /** Bearer token (audience `rayshift`). */
  readonly token?: string;
  /** File holding the bearer token. */
  readonly tokenFile?: string;
  /** CA certificate file (PEM) of the API server. @default the system's */
  readonly caFile?: string;
  /** Do not check the API server's certificate. */
  readonly insecureSkipTlsVerify?: boolean;
  /** Send the token even to an `http://` server beyond this machine (with a warning). */
  readonly allowPlaintextToken?: boolean;
}

/** Environment variable holding the token when neither `--token` nor `--token-file` is given. */
export const TOKEN_ENV = 'RAYSHIFT_TOKEN';

/** Adds `--api-server`, `--token`, `--token-file`, `--ca-file`, `--insecure-skip-tls-verify` and `--allow-plaintext-token` to `command`. */
export function addApiServerOptions(command: Command): Command {
  return command
    .option('--api-server <url>', 'go through this rayshift API server instead of the Kubernetes API, e.g. https://rayshift-api.rayshift-system:8443')
    .option('--token <token>', `bearer token for --api-server, audience rayshift (default: --token-file, else $${TOKEN_ENV})`)
    .option('--token-file <path>', 'file holding the bearer token for --api-server')
    .option('--ca-file <path>', "CA certificate (PEM) of the API server (default: the system's)")
    .option('--insecure-skip-tls-verify', "do not check the API server's certificate (development only)")
    .option('--allow-plaintext-token', 'send the token to an http:// --api-server beyond this machine, unencrypted (refused otherwise)');
}

/** Why `opts` cannot be used as given (a usage error), or undefined. */
export function apiConnectionProblem(opts: ApiConnectionOptions & { readonly kubeconfig?: string; readonly context?: string }): string | undefined {
  if (opts.apiServer === undefined) {
    const stray = [
      opts.token !== undefined && '--token',
      opts.tokenFile !== undefined && '--token-file',
      opts.caFile !== undefined && '--ca-file',
      opts.insecureSkipTlsVerify && '--insecure-skip-tls-verify',
      opts.allowPlaintextToken && '--allow-plaintext-token',
    ].filter(Boolean);
    return stray.length > 0 ? `${stray.join(', ')} need${stray.length === 1 ? 's' : ''} --api-server` : undefined;
  }
  if (opts.kubeconfig !== undefined) return '--kubeconfig and --api-server exclude each other';
  if (opts.context !== undefined) return '--context and --api-server exclude each other';
  if (opts.token !== undefined && opts.tokenFile !== undefined) return '--token and --token-file exclude each other';
  if (!/^https?:\/\/[^/]/.test(opts.apiServer)) return `--api-server must be an http(s) URL; got ${JSON.stringify(opts.apiServer)}`;
  return undefined;
}

/** The token to send: `--token`, else the trimmed contents of `--token-file`, else `$RAYSHIFT_TOKEN`; undefined when none is set. */
export function resolveToken(opts: ApiConnectionOptions, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (opts.token !== undefined) return opts.token;
  if (opts.tokenFile !== undefined) {
    try {
      return fs.readFileSync(opts.tokenFile, 'utf8').trim();
    } catch (e) {
      throw new Error(`cannot read --token-file ${opts.tokenFile}: ${(e as NodeJS.ErrnoException).code ?? 'unreadable'}`);
    }
  }
  return env[TOKEN_ENV] || undefined;
}

/** Where the token comes from, in the user's words (`resolveToken`'s order). */
function tokenSource(opts: ApiConnectionOptions): string {
  if (opts.token !== undefined) return '--token';
  if (opts.tokenFile !== undefined) return `--token-file ${opts.tokenFile}`;
  return `$${TOKEN_ENV}`;
}

/**
 * What to say before a token goes to `opts.apiServer`: over `http://` beyond this machine anyone on
 * the path can read and replay it (it is a bearer token), so that is refused, or with
 * `--allow-plaintext-token` (e.g. a network encrypted below HTTP) warned about; nothing otherwise.
 */
export function plaintextTokenNotice(opts: ApiConnectionOptions & { readonly apiServer: string }): { readonly refusal?: string; readonly warning?: string } {
  const url = new URL(opts.apiServer);
  if (url.protocol !== 'http:' || isLoopbackHost(url.hostname)) return {};
  const risk = `over plain HTTP to ${url.origin}, where anyone on the network path can read and reuse it`;
  if (opts.allowPlaintextToken) return { warning: `sending the bearer token (from ${tokenSource(opts)}) ${risk}` };
  return { refusal: `refusing to send the bearer token (from ${tokenSource(opts)}) ${risk}: use an https:// URL (with --ca-file for its CA), or --allow-plaintext-token if the path is encrypted otherwise` };
}
