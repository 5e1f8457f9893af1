/**
 * The client with which the CLI's RayService verbs reach a rayshift API server (`--api-server`),
 * and what the server's errors say to the user.
 */
import * as fs from 'node:fs';
import { Code, ConnectError } from '@connectrpc/connect';
import { createApiClient, type ApiClient } from '../apiserver/client';
import { TOKEN_ENV, type ApiConnectionOptions } from './api-options';

/** A typed client of the API server `opts.apiServer` (gRPC), with the resolved token and TLS settings. */
export function connectApi(opts: ApiConnectionOptions & { readonly apiServer: string }, token: string | undefined): ApiClient {
  return createApiClient({
    baseUrl: opts.apiServer,
    token,
    ca: opts.caFile !== undefined ? fs.readFileSync(opts.caFile) : undefined,
    insecureSkipTlsVerify: opts.insecureSkipTlsVerify,
  });
}

/** What the user asked the API server for, to name it in error messages. */
export interface ApiAttempt {
  /** The verb as the user would say it: `read`, `watch`, `pause`, … */
  readonly verb: string;
  readonly namespace: string;
  readonly name: string;
}

/** `PermissionDenied` → `PERMISSION_DENIED`. */
function codeName(code: Code): string {
  return Code[code].replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase();
}

/**
 * The message for a failure of an API-server call: 401 says the caller is not authenticated (and
 * why that may be), 403 names the verb and the object, FAILED_PRECONDITION carries the server's
 * reason, an unreachable or untrusted server names its URL; anything else shows the URL, the code
 * and the message.
 */
export function describeApiError(err: unknown, attempt: ApiAttempt, server: { readonly url: string; readonly tokenGiven: boolean }): string {
  const e = ConnectError.from(err);
  const object = `RayService ${attempt.namespace}/${attempt.name}`;
  switch (e.code) {
    case Code.Unauthenticated:
      return server.tokenGiven
        ? `not authenticated by the API server ${server.url}: the token was rejected (expired, or not issued for audience "rayshift"?)`
        : `not authenticated by the API server ${server.url}: no token given (use --token, --token-file or $${TOKEN_ENV})`;
    case Code.PermissionDenied:
      return `permission denied: you may not ${attempt.verb} ${object}`;
    case Code.FailedPrecondition:
      return `cannot ${attempt.verb} ${object}: ${e.rawMessage}`;
    default:
      if (/certificate/i.test(e.rawMessage)) return `the certificate of the API server ${server.url} is not trusted: ${e.rawMessage} (give its CA with --ca-file)`;
      if (e.code === Code.Unavailable) return `the API server ${server.url} is unavailable: ${e.rawMessage}`;
      return `the call to the API server ${server.url} failed: ${codeName(e.code)}: ${e.rawMessage}`;
  }
}
