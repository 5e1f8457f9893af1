/**
 * Where a cluster's Ray dashboard is. This is the client's only injectable seam: the client sends
 * requests to the address the resolver returns and to no other (it follows no redirects).
 */
import { RAY_PORTS, headService } from '../../spec/object-names';
import type { ClusterRef } from './errors';

/** Maps a RayCluster to the base URL of its dashboard (`http://host:8265`, optionally with a path prefix). */
export interface DashboardResolver {
  /** Base URL of the cluster's dashboard; `http:` or `https:`, no credentials, query or fragment. */
  resolve(cluster: ClusterRef): string | Promise<string>;
}

/** Options of `defaultDashboardResolver`. */
export interface DefaultDashboardResolverOptions {
  /** Kubernetes cluster DNS domain. @default "cluster.local" */
  readonly clusterDomain?: string;
  /** Port of the head Service named `dashboard`. @default 8265 */
  readonly port?: number;
  /**
   * Addresses configured by the user, keyed `namespace/name` (or just `name`), e.g. a port-forward
   * or a network-namespace address; they take precedence over the in-cluster DNS name.
   */
  readonly addresses?: { readonly [cluster: string]: string };
}

/** KubeRay's default dashboard port (head container port named `dashboard`). */
export const DEFAULT_DASHBOARD_PORT: number = RAY_PORTS.dashboard.port;

/**
 * The default resolver: a user-configured address when there is one for the cluster, else KubeRay's
 * in-cluster name `http://<cluster>-head-svc.<namespace>.svc.<clusterDomain>:8265`.
 */
export function defaultDashboardResolver(options: DefaultDashboardResolverOptions = {}): DashboardResolver {
  const domain = options.clusterDomain ?? 'cluster.local';
  const port = options.port ?? DEFAULT_DASHBOARD_PORT;
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new RangeError(`dashboard port must be an integer between 1 and 65535; got ${port}`);
  }
  const addresses = options.addresses ?? {};
  return {
    resolve(cluster: ClusterRef): string {
      const configured = addresses[`${cluster.namespace}/${cluster.name}`] ?? addresses[cluster.name];
      if (configured !== undefined) return configured;
      return `http://${headService(cluster.name)}.${cluster.namespace}.svc.${domain}:${port}`;
    },
  };
}

/**
 * A resolver from a user-configured URL template with `{namespace}` and `{cluster}` placeholders,
 * e.g. `http://127.0.0.1:8001/api/v1/namespaces/{namespace}/services/{cluster}-head-svc:dashboard/proxy`
 * (through `kubectl proxy`) for an operator running outside the cluster. Both values are
 * DNS labels by construction; they are URL-encoded all the same.
 */
export function templateDashboardResolver(template: string): DashboardResolver {
  if (!template.includes('{cluster}')) throw new RangeError(`dashboard address template must contain {cluster}; got ${JSON.stringify(template)}`);
  const url = new URL(template.replace('{namespace}', 'ns').replace('{cluster}', 'c'));
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new RangeError(`dashboard address template must be an http(s) URL; got ${JSON.stringify(template)}`);
  }
  return {
    resolve: (cluster: ClusterRef) =>
      template.replace('{namespace}', encodeURIComponent(cluster.namespace)).replace('{cluster}', encodeURIComponent(cluster.name)),
  };
}
