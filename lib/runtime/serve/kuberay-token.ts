/**
 * The Ray dashboard token of a KubeRay cluster with token auth, the way KubeRay finds it: when the
 * RayCluster's `spec.authOptions.mode` is `token`, Secret `spec.authOptions.secretName` (default:
 * the cluster's name) in the cluster's namespace, key `auth_token`. Clusters without token auth get
 * no token, so nothing is sent to them. Tokens are cached briefly (they rotate rarely) and never
 * logged.
 */
import { asObject } from '../../spec/read';
import { ObjectReader } from '../kube/object-reader';
import { RAYCLUSTER } from '../../spec/object-names';
import { KnownTypes } from '../kube/types';
import { ClusterRef } from './errors';

const SECRET = KnownTypes.Secret;
/** Key of the token in KubeRay's Secret. */
export const KUBERAY_TOKEN_KEY = 'auth_token';

/** Options of `kubeRayTokenSource`. */
export interface KubeRayTokenSourceOptions {
  /** How long a token read from a Secret is reused, ms. @default 60000 */
  readonly cacheMs?: number;
  /** The clock. @default Date.now */
  readonly now?: () => number;
}

/** A `TokenSource` for `ServeDashboardClient` that reads KubeRay's token Secret of each cluster. */
export function kubeRayTokenSource(reader: ObjectReader, options: KubeRayTokenSourceOptions = {}): (cluster: ClusterRef) => Promise<string | undefined> {
  const cacheMs = options.cacheMs ?? 60_000;
  const now = options.now ?? Date.now;
  const cache = new Map<string, { token: string | undefined; until: number }>();
  return async (cluster) => {
    const key = `${cluster.namespace}/${cluster.name}`;
    const hit = cache.get(key);
    if (hit && hit.until > now()) return hit.token;
    const rc = await reader.tryGet(RAYCLUSTER, cluster.name, cluster.namespace);
    const auth = asObject(asObject(rc?.spec).authOptions);
    let token: string | undefined;
    if (auth.mode === 'token') {
      const secretName = typeof auth.secretName === 'string' && auth.secretName !== '' ? auth.secretName : cluster.name;
      const secret = await reader.tryGet(SECRET, secretName, cluster.namespace);
      const encoded = asObject(secret?.data)[KUBERAY_TOKEN_KEY];
      if (typeof encoded !== 'string') throw new Error(`RayCluster ${key} uses token auth but Secret ${cluster.namespace}/${secretName} has no ${KUBERAY_TOKEN_KEY}`);
      token = Buffer.from(encoded, 'base64').toString('utf8').trim();
    }
    cache.set(key, { token, until: now() + cacheMs });
    return token;
  };
}
