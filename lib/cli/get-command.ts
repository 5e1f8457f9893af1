/**
 * `rayshift get rayservices` (and, as a kubectl plugin, `kubectl rayshift get rayservices`): one
 * row per `rayshift.dev` RayService with the split of an upgrade in flight, both weights and both
 * target capacities, and the next step, read through a kubeconfig. The columns come from the same
 * view as `rayshift status` (`serviceView`, `nextTrafficStepAt`), so a row says what the status
 * screen says, in one line.
 */
import { nextTrafficStepAt, serviceView, type ServiceView } from '../runtime/rayservice/progress';
import { ALL_NAMESPACES } from '../runtime/kube/types';
import { RAYSHIFT_RAYSERVICE } from '../spec/object-names';
import { EXIT, Output } from './commands';
import { formatDuration } from '../engine/plan-text';
import { clientFor, type KubeconfigOptions } from './status-command';

/** The resource names `get` accepts, as kubectl would for the CRD (plural, singular, qualified). */
export const GET_RESOURCES = ['rayservices', 'rayservice', 'rayservices.rayshift.dev'] as const;

/** Options of `rayshift get`. */
export interface GetOptions extends KubeconfigOptions {
  /** Namespace. @default the kubeconfig context's, else `default` */
  readonly namespace?: string;
  /** List every namespace (adds a NAMESPACE column). */
  readonly allNamespaces?: boolean;
}

/** The header and cells of one row; `namespace` only with `--all-namespaces`. */
export function rayServiceRow(v: ServiceView, now: number, allNamespaces: boolean): string[] {
  const e = v.engine;
  const pending = e?.pendingClusterName;
  const pair = (active: number | undefined, other: number | undefined) => (active === undefined ? '-' : pending === undefined ? `${active}/-` : `${active}/${other}`);
  return [
    ...(allNamespaces ? [v.namespace] : []),
    v.name,
    e ? `${e.phase}/${e.reason}` : '-',
    e?.activeClusterName ?? '-',
    pending ?? '-',
    pair(e?.activeWeight, e?.pendingWeight),
    pair(e?.activeTargetCapacity, e?.pendingTargetCapacity),
    nextStep(v, now),
  ];
}

/** The column titles, in the order of `rayServiceRow`. */
export function rayServiceHeader(allNamespaces: boolean): string[] {
  return [...(allNamespaces ? ['NAMESPACE'] : []), 'NAME', 'PHASE/REASON', 'ACTIVE', 'PENDING', 'WEIGHTS', 'CAPACITIES', 'NEXT STEP'];
}

/**
 * What the upgrade does next: the traffic step's countdown when one waits for the clock, else what
 * it waits for (the engine's reason), `-` when no upgrade is in flight.
 */
function nextStep(v: ServiceView, now: number): string {
  const e = v.engine;
  if (!e || e.pendingClusterName === undefined) return '-';
  const due = nextTrafficStepAt(v);
  if (due === undefined) return e.reason;
  const left = due - now;
  return left <= 0 ? 'traffic step due' : `traffic step in ${formatDuration(Math.ceil(left / 1000))}`;
}

/** Rows as kubectl prints them: left-aligned columns three spaces apart. */
export function renderTable(rows: readonly (readonly string[])[]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] + 3))).join('')).join('\n');
}

/** `rayshift get RESOURCE`: the table of RayServices in the namespace (or all of them); resolves to the exit code. */
export async function getCommand(resource: string, opts: GetOptions, io: Output): Promise<number> {
  if (!(GET_RESOURCES as readonly string[]).includes(resource.toLowerCase())) {
    io.err(`${io.errStyle.red('error:')} get lists ${GET_RESOURCES.join(', ')} (rayshift.dev RayServices); got ${JSON.stringify(resource)}\n`);
    return EXIT.usage;
  }
  if (opts.allNamespaces && opts.namespace !== undefined) {
    io.err(`${io.errStyle.red('error:')} give --namespace or --all-namespaces, not both\n`);
    return EXIT.usage;
  }
  const client = clientFor(opts, io);
  if (!client) return EXIT.invalid;
  try {
    const namespace = opts.allNamespaces ? ALL_NAMESPACES : (opts.namespace ?? client.namespace);
    const items = (await client.listAll(RAYSHIFT_RAYSERVICE, { namespace })).items.sort((a, b) =>
      `${a.metadata.namespace}/${a.metadata.name}`.localeCompare(`${b.metadata.namespace}/${b.metadata.name}`),
    );
    if (items.length === 0) {
      io.err(opts.allNamespaces ? 'No rayshift.dev RayServices found.\n' : `No rayshift.dev RayServices found in ${namespace} namespace.\n`);
      return EXIT.ok;
    }
    const now = Date.now();
    const all = Boolean(opts.allNamespaces);
    io.out(`${renderTable([rayServiceHeader(all), ...items.map((o) => rayServiceRow(serviceView(o), now, all))])}\n`);
    return EXIT.ok;
  } catch (e) {
    io.err(`${io.errStyle.red('error:')} ${(e as Error).message}\n`);
    return EXIT.invalid;
  } finally {
    client.close();
  }
}
