/**
 * The optional peer dependencies of the `rayshift` package: packages only some subcommands load
 * (`validate`, `plan`, `dashboard`, `--help` and `--version` need none of them), the ranges to
 * install, which subcommand needs which, and the error that names a missing one before the
 * subcommand starts.
 */

/** Each optional peer dependency and the version range rayshift is built against. */
export const OPTIONAL_PEERS = {
  '@kubernetes/client-node': '^1.4.0',
  '@connectrpc/connect': '^2.1.2',
  '@connectrpc/connect-node': '^2.1.2',
  '@bufbuild/protobuf': '^2.13.0',
  pino: '^9.14.0',
  'prom-client': '^15.1.3',
} as const;

/** The name of an optional peer dependency. */
export type OptionalPeer = keyof typeof OPTIONAL_PEERS;

/** The Kubernetes API through a kubeconfig. */
const KUBE: readonly OptionalPeer[] = ['@kubernetes/client-node'];
/** The rayshift API server's client (`--api-server`). */
const API_CLIENT: readonly OptionalPeer[] = ['@connectrpc/connect', '@connectrpc/connect-node', '@bufbuild/protobuf'];
/** The long-running servers: all of them. */
const SERVERS = Object.keys(OPTIONAL_PEERS) as OptionalPeer[];

/** The verbs that read or steer a RayService (or, for `status`, a RoleBasedGroup). */
const CLIENT_VERBS = new Set(['status', 'pause', 'resume', 'promote', 'abort', 'rollback']);

/** The optional peers subcommand `verb` loads with its options `opts` (none for the others). */
export function peersOf(verb: string, opts: { readonly apiServer?: unknown }): readonly OptionalPeer[] {
  if (CLIENT_VERBS.has(verb)) return opts.apiServer === undefined ? KUBE : API_CLIENT;
  if (verb === 'api-server' || verb === 'operator') return SERVERS;
  return [];
}

/** Whether `pkg` can be loaded from where the CLI's modules are (a package that is present but fails to load counts as installed: loading it reports why). */
export function isInstalled(pkg: string): boolean {
  try {
    require.resolve(pkg);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND';
  }
}

/** A subcommand cannot run: optional peer dependencies it loads are not installed. */
export class MissingPeerError extends Error {
  constructor(
    /** The subcommand. */
    readonly verb: string,
    /** The packages that are missing. */
    readonly missing: readonly OptionalPeer[],
  ) {
    const one = missing.length === 1;
    super(
      `rayshift ${verb} needs ${missing.join(', ')}, ${one ? 'an optional peer dependency' : 'optional peer dependencies'}: ` +
        `npm install ${missing.map((p) => `${p}@${OPTIONAL_PEERS[p]}`).join(' ')}`,
    );
    this.name = 'MissingPeerError';
  }
}

/** Throws `MissingPeerError` when a package subcommand `verb` needs with `opts` is not installed. */
export function checkPeers(verb: string, opts: { readonly apiServer?: unknown }, installed: (pkg: string) => boolean = isInstalled): void {
  const missing = peersOf(verb, opts).filter((p) => !installed(p));
  if (missing.length > 0) throw new MissingPeerError(verb, missing);
}
