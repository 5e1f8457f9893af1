/**
 * Errors of the core API: google.rpc codes with the HTTP mapping of gRPC transcoding, and messages
 * written here rather than copied from Kubernetes or from exceptions, so no internal text (paths,
 * stack traces, server addresses, other users' names) reaches a client.
 */
import { Code, ConnectError } from '@connectrpc/connect';
import { create } from '@bufbuild/protobuf';
import { KubeApiError, KubeConnectionError, UnknownKindError, type StatusCause } from '../runtime/kube/errors';
import { BadRequestSchema, BadRequest_FieldViolationSchema } from './gen/google/rpc/error_details_pb';

/** The HTTP status of each code (google.rpc / grpc-gateway mapping; CANCELLED is 499). */
export const HTTP_STATUS_OF_CODE: Readonly<Record<Code, number>> = {
  [Code.Canceled]: 499,
  [Code.Unknown]: 500,
  [Code.InvalidArgument]: 400,
  [Code.DeadlineExceeded]: 504,
  [Code.NotFound]: 404,
  [Code.AlreadyExists]: 409,
  [Code.PermissionDenied]: 403,
  [Code.ResourceExhausted]: 429,
  [Code.FailedPrecondition]: 400,
  [Code.Aborted]: 409,
  [Code.OutOfRange]: 400,
  [Code.Unimplemented]: 501,
  [Code.Internal]: 500,
  [Code.Unavailable]: 503,
  [Code.DataLoss]: 500,
  [Code.Unauthenticated]: 401,
};

/** One field violation: a request field path and what is wrong with it. */
export interface FieldViolation {
  readonly field: string;
  readonly description: string;
}

/** INVALID_ARGUMENT carrying every violation as a google.rpc.BadRequest detail. */
export function invalidArgument(summary: string, violations: readonly FieldViolation[]): ConnectError {
  const detail = create(BadRequestSchema, {
    fieldViolations: violations.map((v) => create(BadRequest_FieldViolationSchema, { field: v.field, description: v.description })),
  });
  return new ConnectError(summary, Code.InvalidArgument, undefined, [{ desc: BadRequestSchema, value: detail }]);
}

/** INVALID_ARGUMENT for a request refused by `STRUCT_LIMITS` before it was decoded, naming the field and the limit. */
export function tooComplex(problem: FieldViolation): ConnectError {
  return invalidArgument(`the request is refused undecoded: ${problem.field || 'the message'} ${problem.description}`, [problem]);
}

/** What a Kubernetes call was about, for messages that name the object but nothing internal. */
export interface Subject {
  /** Resource kind as the API names it, e.g. `RayService`. */
  readonly kind: string;
  readonly namespace?: string;
  readonly name?: string;
}

function describe(s: Subject): string {
  return `${s.kind}${s.name ? ` ${s.name}` : 's'}${s.namespace ? ` in namespace ${s.namespace}` : ''}`;
}

/**
 * ABORTED for a write whose etag is not the object's current one, as kube-apiserver answers a stale
 * resourceVersion with 409 Conflict. Handlers also raise it themselves when the etag is not even a
 * resourceVersion (kube-apiserver would answer that with a 500).
 */
export function staleEtag(subject: Subject): ConnectError {
  return new ConnectError(`${describe(subject)} was changed by someone else (stale etag); read it again and retry`, Code.Aborted);
}

/**
 * The field violations of a Kubernetes `Invalid` answer, one per distinct cause. Kubernetes prints a
 * cause about the whole object with the field `<nil>` (Go's nil path); such a cause names no field.
 */
function causeViolations(causes: readonly StatusCause[]): FieldViolation[] {
  const seen = new Set<string>();
  const out: FieldViolation[] = [];
  for (const c of causes) {
    const field = c.field && c.field !== '<nil>' ? c.field : '';
    const description = c.message || c.reason || 'invalid';
    const key = `${field}\u0000${description}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ field, description });
  }
  return out;
}

/**
 * The ConnectError for any failure of a handler. ConnectErrors pass unchanged; Kubernetes answers map
 * by status (404 NOT_FOUND, AlreadyExists ALREADY_EXISTS, Conflict ABORTED, 410 FAILED_PRECONDITION,
 * 422 INVALID_ARGUMENT with the field causes, 403 PERMISSION_DENIED, 401 UNAUTHENTICATED, 429
 * RESOURCE_EXHAUSTED, 504 DEADLINE_EXCEEDED, 5xx UNAVAILABLE); anything else is INTERNAL.
 */
export function toConnectError(err: unknown, subject: Subject): ConnectError {
  if (err instanceof ConnectError) return err;
  const what = describe(subject);
  if (err instanceof KubeApiError) {
    switch (true) {
      case err.isNotFound:
        return new ConnectError(`${what} not found`, Code.NotFound);
      case err.isAlreadyExists:
        return new ConnectError(`${what} already exists`, Code.AlreadyExists);
      case err.statusCode === 409:
        return staleEtag(subject);
      case err.isGone:
        return new ConnectError('the page token or resource version has expired; start again from the first page', Code.FailedPrecondition);
      case err.isInvalid:
      case err.statusCode === 400:
        return invalidArgument(`${what} is invalid`, causeViolations(err.details?.causes ?? []));
      case err.isForbidden:
        return new ConnectError(`permission denied on ${what}`, Code.PermissionDenied);
      case err.isUnauthorized:
        return new ConnectError('the caller is not authenticated', Code.Unauthenticated);
      case err.statusCode === 429:
        return new ConnectError('too many requests; retry later', Code.ResourceExhausted);
      case err.statusCode === 504:
        return new ConnectError('the Kubernetes API timed out', Code.DeadlineExceeded);
      case err.statusCode >= 500:
        return new ConnectError('the Kubernetes API is unavailable', Code.Unavailable);
    }
  }
  if (err instanceof KubeConnectionError) return new ConnectError('the Kubernetes API is unreachable', Code.Unavailable);
  if (err instanceof UnknownKindError) return new ConnectError(`${subject.kind} is not served by this cluster (CRD not installed)`, Code.FailedPrecondition);
  // Not a Kubernetes answer but a fault of this server: the original rides along as the cause, for `publicError` to log.
  return new ConnectError('internal error', Code.Internal, undefined, undefined, err);
}

/** Unpaired UTF-16 surrogates: what a JSON `"\\ud800"` decodes to, and no text UTF-8 or percent-encoding can carry. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * `text` with each unpaired surrogate replaced by U+FFFD, for messages that quote a client's value:
 * gRPC percent-encodes its `grpc-message` with `encodeURIComponent`, which throws on them (the call
 * then never ends).
 */
export function wellFormed(text: string): string {
  return text.replace(LONE_SURROGATE, '\ufffd');
}

/**
 * The error a client may see for anything a handler threw: ConnectErrors as they are (their message
 * made well-formed), anything else INTERNAL with a fixed message (`onInternal` gets the original, for
 * the server's log, also when `toConnectError` already made it INTERNAL).
 */
export function publicError(err: unknown, onInternal: (err: unknown) => void): ConnectError {
  if (err instanceof ConnectError) {
    if (err.code === Code.Internal && err.cause !== undefined) onInternal(err.cause);
    const message = wellFormed(err.rawMessage);
    if (message === err.rawMessage) return err;
    const copy = new ConnectError(message, err.code, err.metadata, undefined, err.cause);
    copy.details = err.details;
    return copy;
  }
  onInternal(err);
  return new ConnectError('internal error', Code.Internal);
}
