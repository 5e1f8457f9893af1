/**
 * The access log: one structured line per API call (RPC on any protocol, or REST route), written
 * when the response closes, with who called (the authenticated user name, never the token or any
 * header), what (RPC, REST route, namespace and name), the answer (google.rpc code and HTTP status),
 * how long it took and the body sizes. The layers that learn each part fill in one `CallRecord`.
 */
import { isMessage, type Message } from '@bufbuild/protobuf';
import { Code, createContextKey } from '@connectrpc/connect';
import { codeFromHttpStatus } from '@connectrpc/connect/protocol-connect';
import type { Logger } from 'pino';
import type { NodeRequest, NodeResponse } from './rest/rest-handler';
import type { RpcProtocol } from './rpc-errors';

/** How a call arrived. */
export type CallProtocol = RpcProtocol | 'rest';

/** What the line of one call says; each field is set by the layer that learns it. */
export interface CallRecord {
  readonly protocol: CallProtocol;
  /** `service/method`, e.g. `rayshift.v1.RayServiceService/GetRayService`. */
  readonly rpc: string;
  /** REST only: the route matched, e.g. `GET /apis/rayshift/v1/namespaces/{namespace}/rayservices/{name}`. */
  readonly route?: string;
  /** The authenticated user name. */
  caller?: string;
  namespace?: string;
  name?: string;
  /** The code answered; unset: OK, unless the HTTP status or an unfinished response says otherwise. */
  code?: Code;
  bytesIn?: number;
  bytesOut?: number;
}

/** The context key under which a call's record reaches the Connect interceptors and router wrappers. */
export const CALL_RECORD = createContextKey<CallRecord | undefined>(undefined, { description: 'rayshift access-log record' });

/** Notes the namespace and name a request is about: its own `namespace`/`name`, else the `name` of a resource it carries. */
export function noteSubject(record: CallRecord, request: Message): void {
  const fields = request as unknown as Record<string, unknown>;
  if (typeof fields.namespace === 'string' && fields.namespace) record.namespace = fields.namespace;
  if (typeof fields.name === 'string' && fields.name) {
    record.name = fields.name;
    return;
  }
  for (const value of Object.values(fields)) {
    const name = isMessage(value) ? (value as unknown as Record<string, unknown>).name : undefined;
    if (typeof name === 'string' && name) {
      record.name = name;
      return;
    }
  }
}

/** The code of a finished call in the words of the metrics (`ok`, `InvalidArgument`, ...). */
function codeName(record: CallRecord, res: NodeResponse, finished: boolean): string {
  if (record.code !== undefined) return Code[record.code];
  // A response that never finished was cut short, most often by the client going away.
  if (!finished) return Code[Code.Canceled];
  return res.statusCode >= 400 ? Code[codeFromHttpStatus(res.statusCode)] : 'ok';
}

/** Writes the access log through the server's logger (`info` level), or nowhere when off. */
export class AccessLog {
  constructor(private readonly log: Logger | undefined) {}

  /** The record of a call answered on `res`; its line is written when `res` closes. */
  start(req: NodeRequest, res: NodeResponse, protocol: CallProtocol, rpc: string, route?: string): CallRecord {
    const record: CallRecord = { protocol, rpc, ...(route ? { route } : {}) };
    const log = this.log;
    if (!log) return record;
    const started = performance.now();
    const declaredIn = Number(req.headers['content-length']);
    const client = req.socket?.remoteAddress;
    let finished = false;
    res.once('finish', () => (finished = true));
    res.once('close', () => {
      log.info(
        {
          caller: record.caller,
          protocol,
          rpc,
          route,
          httpMethod: req.method,
          namespace: record.namespace,
          name: record.name,
          code: codeName(record, res, finished),
          httpStatus: res.statusCode,
          durationMs: Math.round((performance.now() - started) * 10) / 10,
          bytesIn: record.bytesIn ?? (Number.isFinite(declaredIn) ? declaredIn : undefined),
          bytesOut: record.bytesOut,
          client,
        },
        'call',
      );
    });
    return record;
  }
}
