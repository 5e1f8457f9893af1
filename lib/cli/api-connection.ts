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
    ca: opts.caFile !== undefined ? readCaFile(opts.caFile) : undefined,
    insecureSkipTlsVerify: opts.insecureSkipTlsVerify,
  });
}

function readCaFile(file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (e) {
    throw new Error(`cannot read --ca-file ${file}: ${(e as NodeJS.ErrnoException).code ?? 'unreadable'}`);
  }
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

/** The API server as the user named it. */
export interface ApiServerNamed {
  readonly url: string;
  readonly tokenGiven: boolean;
  /** `--ca-file`, when given: the CA that alone was trusted. */
  readonly caFile?: string;
}

/** Node's TLS verification codes (`err.code` of the cause) by what the user should fix. */
const UNKNOWN_AUTHORITY = new Set(['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_GET_ISSUER_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'CERT_UNTRUSTED', 'CERT_SIGNATURE_FAILURE']);
const NOT_VALID_NOW = new Set(['CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID']);

/** Node's hint that the system's CAs may help; wrong once `--ca-file` replaced them. */
const SYSTEM_CA_HINT = /; if the root CA is installed locally, try running Node\.js with --use-system-ca$/;

/**
 * Why the server's certificate was refused, with advice that fits: another host name needs another
 * URL, an expired certificate another certificate, an unknown signer `--ca-file`, or, when
 * `--ca-file` was given, that file names the wrong CA. Undefined when `e` is no certificate error.
 */
function describeCertificateError(e: ConnectError, server: ApiServerNamed): string | undefined {
  const code = String((e.cause as NodeJS.ErrnoException | undefined)?.code ?? '');
  // The transport words the cause as `String(err)`: `Error [CODE]: text`.
  const message = e.rawMessage.replace(/^Error(?: \[[A-Z_]+\])?: /, '');
  const of = `the certificate of the API server ${server.url}`;
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID' || /does not match certificate's altnames/i.test(message)) {
    return `${of} is not issued for its host ${new URL(server.url).hostname}: ${message} (give --api-server a host name the certificate holds)`;
  }
  if (NOT_VALID_NOW.has(code) || /certificate (has expired|is not yet valid)/i.test(message)) return `${of} is not valid now: ${message}`;
  const unknown = UNKNOWN_AUTHORITY.has(code) || /self[- ]signed|unable to (verify|get)|issuer/i.test(message);
  if (!unknown && !/certificate/i.test(message)) return undefined;
  if (server.caFile === undefined) return `${of} is not trusted: ${message} (give its CA with --ca-file)`;
  const why = message.replace(SYSTEM_CA_HINT, '');
  return unknown
    ? `the CA in --ca-file ${server.caFile} did not verify ${of}: ${why} (is it the CA that signed the server's certificate, and does the server send its intermediate certificates?)`
    : `${of} was refused with the CA in --ca-file ${server.caFile}: ${why}`;
}

/**
 * The message for a failure of an API-server call: 401 says the caller is not authenticated (and
 * why that may be), 403 names the verb and the object, FAILED_PRECONDITION carries the server's
 * reason, an unreachable server names its URL, a refused certificate says why and what to fix;
 * anything else shows the URL, the code and the message.
 */
export function describeApiError(err: unknown, attempt: ApiAttempt, server: ApiServerNamed): string {
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
      const certificate = describeCertificateError(e, server);
      if (certificate !== undefined) return certificate;
      if (e.code === Code.Unavailable) return `the API server ${server.url} is unavailable: ${e.rawMessage}`;
      return `the call to the API server ${server.url} failed: ${codeName(e.code)}: ${e.rawMessage}`;
  }
}
