/**
 * Errors on REST as `google.rpc.Status` JSON (`{code, message, details}`, details as `Any` JSON with
 * `@type`), with the HTTP status of the code.
 */
import { toJson, type JsonValue } from '@bufbuild/protobuf';
import { ConnectError } from '@connectrpc/connect';
import { HTTP_STATUS_OF_CODE } from '../errors';

/** The HTTP status and body of an error. */
export function statusJson(err: ConnectError): { httpStatus: number; body: { code: number; message: string; details: JsonValue[] } } {
  const details: JsonValue[] = [];
  for (const d of err.details) {
    if ('desc' in d) details.push({ '@type': `type.googleapis.com/${d.desc.typeName}`, ...(toJson(d.desc, d.value as never) as Record<string, JsonValue>) });
  }
  return { httpStatus: HTTP_STATUS_OF_CODE[err.code], body: { code: err.code, message: err.rawMessage, details } };
}
