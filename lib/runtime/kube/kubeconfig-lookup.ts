/**
 * Where the Kubernetes configuration of a client comes from: a given kubeconfig file, else
 * `@kubernetes/client-node`'s default lookup (`KubeConfig.loadFromDefault`), in its order:
 * `$KUBECONFIG` (every file it lists), else `~/.kube/config`, else the in-cluster ServiceAccount.
 * When none of them is there, client-node falls back to `http://localhost:8080` and the first
 * request fails far from the cause ("HTTP protocol is not allowed when skipTLSVerify is not set");
 * this lookup tells the caller where it looked instead.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { loadClientNode } from './client-node';

/** Where a pod's ServiceAccount credentials are mounted. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** What `lookUpKubeconfig` found at each place it looked. */
export interface KubeconfigLookup {
  /** The configuration a client will load, or undefined when there is none. */
  readonly found?: 'given' | 'env' | 'home' | 'in-cluster';
  /** The kubeconfig file given explicitly (`--kubeconfig`); when given, nothing else is looked at. */
  readonly given?: { readonly path: string; readonly exists: boolean };
  /** `$KUBECONFIG`: its value (undefined when unset or empty) and the files it lists that do not exist. */
  readonly env: { readonly value?: string; readonly missing: readonly string[] };
  /** `~/.kube/config`: its path (undefined without a home folder) and whether it exists. */
  readonly home: { readonly path?: string; readonly exists: boolean };
  /** The in-cluster ServiceAccount: `$KUBERNETES_SERVICE_HOST` and the token file. */
  readonly inCluster: { readonly host?: string; readonly tokenFile: string; readonly tokenExists: boolean };
}

/** Inputs of `lookUpKubeconfig`; the defaults are the process's. */
export interface KubeconfigLookupOptions {
  /** A kubeconfig file given explicitly. */
  readonly kubeconfig?: string;
  /** Environment. @default process.env */
  readonly env?: NodeJS.ProcessEnv;
  /** Home folder, or null without one. @default `$HOME` when it exists (on Windows client-node's `findHomeDir()`) */
  readonly homeDir?: string | null;
  /** ServiceAccount folder. @default SERVICE_ACCOUNT_DIR */
  readonly serviceAccountDir?: string;
}

const exists = (file: string) => fs.existsSync(file);

/** The home folder client-node's `findHomeDir()` finds: `$HOME` when it exists; Windows has more candidates, which client-node knows. */
function homeDirOf(env: NodeJS.ProcessEnv): string | null {
  if (process.platform === 'win32') return loadClientNode().findHomeDir();
  return env.HOME && exists(env.HOME) ? env.HOME : null;
}

/** Looks where a client's configuration would come from, in client-node's order, without loading it. */
export function lookUpKubeconfig(opts: KubeconfigLookupOptions = {}): KubeconfigLookup {
  const env = opts.env ?? process.env;
  const value = env.KUBECONFIG || undefined;
  const files = (value ?? '').split(path.delimiter).filter(Boolean);
  const homeDir = opts.homeDir !== undefined ? opts.homeDir : homeDirOf(env);
  const homeConfig = homeDir ? path.join(homeDir, '.kube', 'config') : undefined;
  const tokenFile = path.join(opts.serviceAccountDir ?? SERVICE_ACCOUNT_DIR, 'token');
  const lookup = {
    ...(opts.kubeconfig !== undefined ? { given: { path: opts.kubeconfig, exists: exists(opts.kubeconfig) } } : {}),
    env: { value: files.length > 0 ? value : undefined, missing: files.filter((f) => !exists(f)) },
    home: { path: homeConfig, exists: homeConfig !== undefined && exists(homeConfig) },
    inCluster: { host: env.KUBERNETES_SERVICE_HOST || undefined, tokenFile, tokenExists: exists(tokenFile) },
  };
  return { ...lookup, found: foundIn(lookup) };
}

function foundIn(l: Omit<KubeconfigLookup, 'found'>): KubeconfigLookup['found'] {
  if (l.given) return l.given.exists ? 'given' : undefined;
  // client-node reads every file $KUBECONFIG lists and fails on a missing one; it never falls back.
  if (l.env.value !== undefined) return l.env.missing.length === 0 ? 'env' : undefined;
  if (l.home.exists) return 'home';
  return l.inCluster.tokenExists && l.inCluster.host !== undefined ? 'in-cluster' : undefined;
}

/**
 * The in-cluster configuration: server from `KUBERNETES_SERVICE_HOST`/`_PORT`, CA, token and
 * namespace from the ServiceAccount folder `dir`. The token is a token file, re-read every minute,
 * so kubelet's rotation is picked up (what client-node's `loadFromCluster()` builds, with the
 * folder and environment given here).
 */
export function inClusterKubeConfig(dir: string): KubeConfig {
  const host = process.env.KUBERNETES_SERVICE_HOST;
  const port = process.env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) throw new Error('not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set');
  let namespace: string | undefined;
  try {
    namespace = fs.readFileSync(path.join(dir, 'namespace'), 'utf8').trim() || undefined;
  } catch {
    namespace = undefined;
  }
  const { KubeConfig } = loadClientNode();
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'inCluster', server: `https://${net.isIPv6(host) ? `[${host}]` : host}:${port}`, caFile: path.join(dir, 'ca.crt'), skipTLSVerify: false }],
    users: [{ name: 'inClusterUser', authProvider: { name: 'tokenFile', config: { tokenFile: path.join(dir, 'token') } } }],
    contexts: [{ name: 'inClusterContext', cluster: 'inCluster', user: 'inClusterUser', namespace }],
    currentContext: 'inClusterContext',
  });
  return kc;
}
