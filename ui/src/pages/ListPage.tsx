/**
 * Every RayService the viewer may list (all namespaces) and the RoleBasedGroups of their namespaces
 * plus any the viewer adds, with phase and a sparkline of the split, refreshed every few seconds.
 */
import { useState } from 'preact/hooks';
import { ApiError, listAllRayServices, listRoleBasedGroups, type RayServiceJson, type RoleBasedGroupJson } from '../api';
import { ColumnHeadings, PhaseBadge, Sparkline } from '../components/small';
import { num, sampleOf, type Sample } from '../model';
import { usePolling } from '../polling';
import { hrefOf } from '../hash-location';
import { record } from '../store';

const REFRESH_MS = 3_000;
const EXTRA_NAMESPACES_KEY = 'rayshift.namespaces';

function savedNamespaces(): string[] {
  return (localStorage.getItem(EXTRA_NAMESPACES_KEY) ?? '').split(/[\s,]+/).filter(Boolean);
}

interface Listing {
  readonly services: ReadonlyArray<{ svc: RayServiceJson; samples: Sample[] }>;
  readonly groups: readonly RoleBasedGroupJson[];
  readonly groupErrors: readonly string[];
}

async function load(extra: readonly string[]): Promise<Listing> {
  const services = await listAllRayServices();
  const now = Date.now();
  const namespaces = [...new Set([...services.map((s) => s.namespace ?? ''), ...extra])].filter(Boolean).sort();
  const groupErrors: string[] = [];
  const groups = (
    await Promise.all(
      namespaces.map((ns) =>
        listRoleBasedGroups(ns).catch((e: unknown) => {
          if (extra.includes(ns)) groupErrors.push(`${ns}: ${e instanceof ApiError ? e.message : 'failed'}`);
          return [];
        }),
      ),
    )
  ).flat();
  return {
    services: services.map((svc) => ({ svc, samples: svc.upgrade ? record(`${svc.namespace}/${svc.name}`, sampleOf(svc.upgrade, now)) : [] })),
    groups,
    groupErrors,
  };
}

/** A list row's first cells: the namespace, and the name as the row's heading linking to the object's page. */
function ObjectCells({ page, namespace, name }: { page: 'rayservice' | 'rolebasedgroup'; namespace: string | undefined; name: string | undefined }) {
  return (
    <>
      <td>{namespace}</td>
      <th scope="row">
        <a href={hrefOf({ page, namespace: namespace ?? '', name: name ?? '' })}>{name}</a>
      </th>
    </>
  );
}

/** The list page. */
export function ListPage() {
  const [listing, setListing] = useState<Listing | undefined>();
  const [extra, setExtra] = useState(savedNamespaces);
  const [draft, setDraft] = useState(extra.join(' '));

  const error = usePolling(() => load(extra), setListing, REFRESH_MS, [extra]);

  const saveNamespaces = (e: Event) => {
    e.preventDefault();
    const list = draft.split(/[\s,]+/).filter(Boolean);
    localStorage.setItem(EXTRA_NAMESPACES_KEY, list.join(' '));
    setExtra(list);
  };

  return (
    <main id="main" tabIndex={-1}>
      <h1>Rollouts</h1>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <section aria-labelledby="rs-heading">
        <h2 id="rs-heading">RayServices</h2>
        {!listing ? (
          <p class="muted">Loading…</p>
        ) : listing.services.length === 0 ? (
          <p class="muted">No RayServices you may list.</p>
        ) : (
          <table class="list" data-testid="rayservice-list">
            <ColumnHeadings names={['Namespace', 'Name', 'Phase', 'Reason', 'Split (pending share)', 'Traffic']} />
            <tbody>
              {listing.services.map(({ svc, samples }) => {
                const u = svc.upgrade;
                return (
                  <tr key={`${svc.namespace}/${svc.name}`}>
                    <ObjectCells page="rayservice" namespace={svc.namespace} name={svc.name} />
                    <td>
                      <PhaseBadge phase={u?.phase} />
                    </td>
                    <td>{u?.reason}</td>
                    <td>
                      <Sparkline samples={samples} label={`Split of ${svc.name}`} />
                    </td>
                    <td>
                      {u?.pending?.cluster ? `${u.active?.trafficRoutedPercent ?? 0}% / ${u.pending.trafficRoutedPercent ?? 0}%` : `${u?.active?.trafficRoutedPercent ?? 0}%`}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        )}
      </section>
      <section aria-labelledby="rbg-heading">
        <h2 id="rbg-heading">RoleBasedGroups</h2>
        {listing?.groupErrors.map((m) => (
          <p class="error" key={m}>
            {m}
          </p>
        ))}
        {listing && listing.groups.length === 0 && <p class="muted">No RoleBasedGroups in these namespaces.</p>}
        {listing && listing.groups.length > 0 && (
          <table class="list" data-testid="rbg-list">
            <ColumnHeadings names={['Namespace', 'Name', 'Ready', 'Updated replicas', 'Skew']} />
            <tbody>
              {listing.groups.map((g) => {
                const roles = g.roles ?? [];
                const total = roles.reduce((n, r) => n + (r.replicas ?? 0), 0);
                const updated = roles.reduce((n, r) => n + (r.updatedReplicas ?? 0), 0);
                const ready = g.conditions?.find((c) => c.type === 'Ready');
                const worst = (g.coordination ?? []).reduce((m, c) => Math.max(m, num(c.skewPercent) - num(c.maxSkewPercent)), -Infinity);
                return (
                  <tr key={`${g.namespace}/${g.name}`}>
                    <ObjectCells page="rolebasedgroup" namespace={g.namespace} name={g.name} />
                    <td>{ready?.status ?? 'Unknown'}</td>
                    <td>{`${updated} of ${total}`}</td>
                    <td>{worst === -Infinity ? '–' : worst > 0 ? <span class="warn">over maxSkew</span> : 'within maxSkew'}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        )}
        <form class="inline" onSubmit={saveNamespaces}>
          <label for="extra-ns">Also list RoleBasedGroups in namespaces</label>
          <input id="extra-ns" value={draft} onInput={(e) => setDraft((e.target as HTMLInputElement).value)} placeholder="e.g. serving inference" />
          <button type="submit">Show</button>
        </form>
      </section>
    </main>
  );
}
