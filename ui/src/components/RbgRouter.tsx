/**
 * A routed coordination's route (version-matched prefill/decode routing): each release's router
 * and its weight on the route, as rayshift's executor last wrote them (`CoordinationProgress.router`),
 * the new release marked; that the old router may go once it carries nothing for good; the old
 * routers scaled to 0 after the rollout and those the route waits for; or why no weight could be
 * written.
 */
import type { CoordinationRouterJson } from '../../../lib/apiserver/gen/rayshift/v1/rolebasedgroup_pb';
import { Bar, ColumnHeadings } from './small';

/** The route of one routed rule and each release's weight on it. */
export function RbgRouter({ rule, router }: { rule: string; router: CoordinationRouterJson }) {
  const releases = router.releases ?? [];
  const scaledDown = router.scaledDown ?? [];
  const waiting = router.waitingForRouter ?? [];
  return (
    <div class="router" data-testid="rbg-router" data-route={router.route} data-remove-old={router.removeOld ? 'true' : 'false'}>
      <p>
        Route <strong>{router.route}</strong> between the releases' routers
        {router.removeOld && <span class="ok"> (every replica is new and ready: the old router may go)</span>}
      </p>
      {scaledDown.length > 0 && (
        <p data-testid="rbg-router-scaled-down">
          Scaled to 0 after the rollout:{' '}
          {scaledDown.map((d, i) => (
            <span key={d.deployment} data-deployment={d.deployment} data-replicas={d.replicas ?? 0}>
              {i > 0 && ', '}
              {d.deployment} (was {d.replicas ?? 0})
            </span>
          ))}
        </p>
      )}
      {waiting.length > 0 && (
        <p class="warn" data-testid="rbg-router-waiting">
          Weights held until these routers are ready: {waiting.join(', ')}
        </p>
      )}
      {router.problem && (
        <p class="warn" data-testid="rbg-router-problem">
          No weight written: {router.problem}
        </p>
      )}
      {releases.length > 0 && (
        <table data-testid="rbg-router-releases">
          <ColumnHeadings names={['Release', 'Router Service', 'Weight']} />
          <tbody>
            {releases.map((r) => (
              <tr key={r.revision} data-revision={r.revision} data-weight={r.weight ?? 0} data-current={r.current ? 'true' : 'false'}>
                <th scope="row">
                  {r.revision} <span class="muted">{r.current ? 'new' : 'old'}</span>
                </th>
                <td>{r.service}</td>
                <td>
                  <Bar value={r.weight ?? 0} max={100} label={`${rule}: weight of release ${r.revision} on the route`} className={r.current ? 'series-pending' : 'series-active'} /> {r.weight ?? 0}%
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
