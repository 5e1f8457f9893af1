/**
 * Where a RoleBasedGroup rollout rayshift's executor runs stands, both ways: its phase and rounds
 * forward and, once it rolls back, its rollback rounds, their cause and each role's replicas on the
 * abandoned and the previous revision, with the `RolledBack` condition. Nothing for rules RBG runs
 * itself (no executor status).
 */
import type { CoordinationProgressJson } from '../../../lib/apiserver/gen/rayshift/v1/rolebasedgroup_pb';
import { Bar, ColumnHeadings } from './small';

/** The executor's view of one coordination rule, when it reports one. */
export function RbgRollout({ c }: { c: CoordinationProgressJson }) {
  if (!c.phase) return null;
  const back = c.rollback;
  const condition = (c.conditions ?? []).find((x) => x.type === 'RolledBack');
  return (
    <div class="rollout" data-testid="rbg-rollout" data-phase={c.phase} data-rounds={c.rounds ?? 0} data-rollback-rounds={back?.rounds ?? ''}>
      <p>
        Phase <strong>{c.phase}</strong> {c.reason ? `(${c.reason})` : ''}: {c.rounds ?? 0} round(s) forward
        {back && (
          <>
            , <strong data-testid="rbg-rollback-rounds">{back.rounds ?? 0} rollback round(s)</strong> back
          </>
        )}
      </p>
      {c.message && <p class="muted">{c.message}</p>}
      {back && (
        <>
          <p>
            Rolling back since {back.startedAt}: {back.cause}
          </p>
          {condition && (
            <p data-testid="rbg-rolledback-condition" data-status={condition.status}>
              RolledBack {condition.status} ({condition.reason}): {condition.message}
            </p>
          )}
          <table data-testid="rbg-revisions">
            <ColumnHeadings names={['Role', 'Phase', 'On the abandoned revision', 'Back on the previous revision', 'Partition']} />
            <tbody>
              {(c.roles ?? []).map((r) => {
                const total = (r.abandonedReplicas ?? 0) + (r.previousReplicas ?? 0);
                return (
                  <tr key={r.role} data-role={r.role} data-abandoned={r.abandonedReplicas ?? 0} data-previous={r.previousReplicas ?? 0}>
                    <th scope="row">{r.role}</th>
                    <td>{r.phase}</td>
                    <td>
                      <Bar value={r.abandonedReplicas ?? 0} max={total} label={`${r.role} replicas on the abandoned revision`} className="series-pending" /> {r.abandonedReplicas ?? 0} of {total}
                    </td>
                    <td>
                      <Bar value={r.previousReplicas ?? 0} max={total} label={`${r.role} replicas back on the previous revision`} className="series-active" /> {r.previousReplicas ?? 0} of {total}
                    </td>
                    <td>{r.partition ?? 0}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </>
      )}
    </div>
  );
}
