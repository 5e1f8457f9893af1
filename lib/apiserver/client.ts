/**
 * A typed client of the rayshift core API over gRPC, Connect or gRPC-Web (generated service
 * descriptors, so every RPC and message is typed). Authenticates with a bearer token for audience
 * `rayshift` (e.g. `kubectl create token <sa> --audience=rayshift`).
 *
 * ```ts
 * const api = createApiClient({ baseUrl: 'https://rayshift-api.example:8443', token, ca });
 * const svc = await api.rayServices.getRayService({ namespace: 'serving', name: 'llm' });
 * for await (const e of api.rayServices.watchUpgrade({ namespace: 'serving', name: 'llm' })) console.log(e.status?.phase);
 * api.close();
 * ```
 */
import { createClient, type Client, type Interceptor, type Transport } from '@connectrpc/connect';
import { Http2SessionManager, createConnectTransport, createGrpcTransport, createGrpcWebTransport } from '@connectrpc/connect-node';
import * as http from 'node:http';
import * as https from 'node:https';
import { ClusterService } from './gen/rayshift/v1/cluster_pb';
import { ComputeTemplateService } from './gen/rayshift/v1/compute_template_pb';
import { IdentityService } from './gen/rayshift/v1/identity_pb';
import { RayServiceService } from './gen/rayshift/v1/rayservice_service_pb';
import { RoleBasedGroupService } from './gen/rayshift/v1/rolebasedgroup_pb';

/** The wire protocol of the client. */
export type ApiProtocol = 'grpc' | 'connect' | 'grpc-web';

/** Options of `createApiClient`. */
export interface ApiClientOptions {
  /** Server URL, e.g. `https://rayshift-api.rayshift-system:8443`. */
  readonly baseUrl: string;
  /** Bearer token (audience `rayshift`); omit for an `--insecure-local` server. */
  readonly token?: string;
  /** Wire protocol; default `grpc` (HTTP/2). `connect` and `grpc-web` use HTTP/1.1. */
  readonly protocol?: ApiProtocol;
  /** CA certificate(s) (PEM) the server's certificate is checked against; default the system's. */
  readonly ca?: string | Buffer;
  /** Accept any server certificate (development only: anyone on the path can read the token). */
  readonly insecureSkipTlsVerify?: boolean;
  /** Connect protocol only: JSON instead of binary protobuf. */
  readonly useJson?: boolean;
}

/** One client per service, sharing one connection. */
export interface ApiClient {
  readonly rayServices: Client<typeof RayServiceService>;
  readonly clusters: Client<typeof ClusterService>;
  readonly computeTemplates: Client<typeof ComputeTemplateService>;
  readonly roleBasedGroups: Client<typeof RoleBasedGroupService>;
  readonly identity: Client<typeof IdentityService>;
  /** Closes the connection. */
  close(): void;
}

/** A client of the core API. */
export function createApiClient(opts: ApiClientOptions): ApiClient {
  const interceptors: Interceptor[] = opts.token
    ? [
        (next) => (req) => {
          req.header.set('authorization', `Bearer ${opts.token}`);
          return next(req);
        },
      ]
    : [];
  const tls = { ...(opts.ca ? { ca: opts.ca } : {}), ...(opts.insecureSkipTlsVerify ? { rejectUnauthorized: false } : {}) };
  let transport: Transport;
  let close: () => void;
  if ((opts.protocol ?? 'grpc') === 'grpc') {
    const sessionManager = new Http2SessionManager(opts.baseUrl, {}, tls);
    transport = createGrpcTransport({ baseUrl: opts.baseUrl, interceptors, sessionManager });
    close = () => sessionManager.abort();
  } else {
    const agent = opts.baseUrl.startsWith('https:') ? new https.Agent({ keepAlive: true, ...tls }) : new http.Agent({ keepAlive: true });
    const common = { baseUrl: opts.baseUrl, interceptors, httpVersion: '1.1' as const, nodeOptions: { agent } };
    transport = opts.protocol === 'grpc-web' ? createGrpcWebTransport(common) : createConnectTransport({ ...common, useBinaryFormat: !opts.useJson });
    close = () => agent.destroy();
  }
  return {
    rayServices: createClient(RayServiceService, transport),
    clusters: createClient(ClusterService, transport),
    computeTemplates: createClient(ComputeTemplateService, transport),
    roleBasedGroups: createClient(RoleBasedGroupService, transport),
    identity: createClient(IdentityService, transport),
    close,
  };
}
