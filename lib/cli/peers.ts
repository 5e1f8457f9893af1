/**
 * The optional peer dependencies of the `rayshift` package: packages only some subcommands load
 * (`validate`, `plan`, `dashboard`, `--help` and `--version` need none of them), the ranges to
 * install, which subcommand needs which, and the error that names a missing one before the
 * subcommand starts.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { STEERING_VERBS } from '../engine/steering';
import { projectRoot } from '../runtime/package-root';

/** The optional peer dependencies the CLI's subcommands load. */
const CLI_PEERS = ['@kubernetes/client-node', '@connectrpc/connect', '@connectrpc/connect-node', '@bufbuild/protobuf', 'pino', 'prom-client'] as const;

/** The name of an optional peer dependency the CLI loads. */
export type OptionalPeer = (typeof CLI_PEERS)[number];

/** The ranges of `package.json`'s `peerDependencies` (their one home) for the CLI's optional peers. */
function peerRanges(): Readonly<Record<OptionalPeer, string>> {
  const pkg = JSON.parse(fs.readFileSync(path.join(projectRoot(), 'package.json'), 'utf8')) as { peerDependencies?: Record<string, string> };
  return Object.fromEntries(CLI_PEERS.map((p) => [p, pkg.peerDependencies?.[p] ?? '*'])) as Record<OptionalPeer, string>;
}

/** Each optional peer dependency the CLI loads, with the version range to install (from `package.json`). */
export const OPTIONAL_PEERS: Readonly<Record<OptionalPeer, string>> = peerRanges();

/** The Kubernetes API through a kubeconfig. */
const KUBE: readonly OptionalPeer[] = ['@kubernetes/client-node'];
/** The rayshift API server's client (`--api-server`). */
const API_CLIENT: readonly OptionalPeer[] = ['@connectrpc/connect', '@connectrpc/connect-node', '@bufbuild/protobuf'];
/** The long-running servers: all of them. */
const SERVERS = Object.keys(OPTIONAL_PEERS) as OptionalPeer[];

/** The verbs that read or steer a RayService (or, for `status`, a RoleBasedGroup; `get` lists them). */
const CLIENT_VERBS: ReadonlySet<string> = new Set(['status', 'get', ...STEERING_VERBS]);

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
