/**
 * One RoleBasedGroup: per role, updated and ready replicas against desired as bars; per
 * coordination rule, each role's updated share and the skew between them against `maxSkew`, and
 * the rule's metric analysis when rayshift's executor runs one (the rollout page's `AnalysisPanel`);
 * for rules the executor runs, where the rollout stands and, on the way back, its rollback rounds and
 * each role's replicas on either revision (`RbgRollout`); for a rule with a router, its route and
 * each release's router weight (`RbgRouter`).
 * Refreshed every few seconds (the API has no watch for groups).
 */
import { useState } from 'preact/hooks';
import { getRoleBasedGroup, type RoleBasedGroupJson } from '../api';
import { AnalysisPanel } from '../components/AnalysisPanel';
import { RbgRollout } from '../components/RbgRollout';
import { RbgRouter } from '../components/RbgRouter';
import { Bar, ColumnHeadings } from '../components/small';
import { num } from '../model';
import { usePolling } from '../polling';

const REFRESH_MS = 2_000;

function percent(v: number | string | undefined): string {
  return `${Math.round(num(v) * 10) / 10}%`;
}

/** The RoleBasedGroup page of `namespace/name`. */
export function RbgPage({ namespace, name }: { namespace: string; name: string }) {
  const [group, setGroup] = useState<RoleBasedGroupJson | undefined>();

  const error = usePolling(() => getRoleBasedGroup(namespace, name), setGroup, REFRESH_MS, [namespace, name]);

  const ready = group?.conditions?.find((c) => c.type === 'Ready');
  return (
    <main id="main" tabIndex={-1}>
      <p class="crumbs">
        <a href="#/">Rollouts</a> › RoleBasedGroup {namespace}
      </p>
      <h1>{name}</h1>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {group && (
        <>
          <p>
            Ready: <strong>{ready?.status ?? 'Unknown'}</strong> {ready?.reason ? `(${ready.reason})` : ''} <span class="muted">{group.apiVersion}</span>
          </p>
          <section aria-labelledby="roles-heading" class="panel">
            <h2 id="roles-heading">Roles</h2>
            <table class="roles" data-testid="rbg-roles">
              <ColumnHeadings names={['Role', 'Updated', 'Ready']} />
              <tbody>
                {(group.roles ?? []).map((r) => (
                  <tr key={r.name} data-role={r.name} data-updated={r.updatedReplicas ?? 0} data-ready={r.readyReplicas ?? 0} data-replicas={r.replicas ?? 0}>
                    <th scope="row">{r.name}</th>
                    <td>
                      <Bar value={r.updatedReplicas ?? 0} max={r.replicas ?? 0} label={`${r.name} updated replicas`} className="series-pending" /> {r.updatedReplicas ?? 0} of {r.replicas ?? 0}
                    </td>
                    <td>
                      <Bar value={r.readyReplicas ?? 0} max={r.replicas ?? 0} label={`${r.name} ready replicas`} className="series-active" /> {r.readyReplicas ?? 0} of {r.replicas ?? 0}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </section>
          <section aria-labelledby="coord-heading" class="panel">
            <h2 id="coord-heading">Coordination</h2>
            {(group.coordination ?? []).length === 0 && <p class="muted">No coordination rules.</p>}
            {(group.coordination ?? []).map((c) => (
              <div key={c.rule} class="rule" data-testid="coordination-rule" data-skew={num(c.skewPercent)} data-max-skew={num(c.maxSkewPercent)}>
                <h3>{c.rule}</h3>
                <p>
                  Skew <strong>{percent(c.skewPercent)}</strong> of at most {percent(c.maxSkewPercent)}:{' '}
                  {c.withinBound ? <span class="ok">within bound</span> : <span class="warn">over the bound</span>}
                </p>
                <div class="skew" role="img" aria-label={`Skew ${percent(c.skewPercent)}, maximum ${percent(c.maxSkewPercent)}`}>
                  <div class={`skew-fill ${c.withinBound ? '' : 'over'}`} style={{ width: `${Math.min(100, num(c.skewPercent))}%` }} />
                  <div class="skew-max" style={{ left: `${Math.min(100, num(c.maxSkewPercent))}%` }} />
                </div>
                <RbgRollout c={c} />
                {c.router && <RbgRouter rule={c.rule ?? ''} router={c.router} />}
                <table>
                  <ColumnHeadings names={['Role', 'Updated share']} />
                  <tbody>
                    {(c.roles ?? []).map((r) => (
                      <tr key={r.role}>
                        <th scope="row">{r.role}</th>
                        <td>
                          <Bar value={num(r.updatedPercent)} max={100} label={`${r.role} updated share in ${c.rule}`} className="series-pending" /> {percent(r.updatedPercent)}
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
                {c.analysis && (
                  <>
                    <p class="muted">Metric analysis of the rollout; its percent is the new revision's share of the replicas.</p>
                    <AnalysisPanel analysis={c.analysis} scope={`${c.rule}-`} headingLevel={4} />
                  </>
                )}
              </div>
            ))}
          </section>
        </>
      )}
    </main>
  );
}
