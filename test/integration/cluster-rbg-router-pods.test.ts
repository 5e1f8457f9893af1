/**
 * Version-matched routing at 40 prefill / 20 decode, with the routers' workers following the Pods:
 * RBG v0.7.0's real controller rolls a routed group on kwok, rayshift's operator (in this process)
 * moves the partitions and the route's weights, and two REAL sglang-router processes (one per
 * release) get a SIMULATED worker per Ready Pod of their release, registered by a SIMULATED
 * discovery under the selectors the rendered router Deployments carry (test/support/
 * rbg-router-rollout.ts; kwok's Pods run no process). The Gateway is simulated by the client from the
 * route's live weight. No request may be served by a prefill and a decode of different releases,
 * and no router may fail one. Needs `npm run controlplane:build`,
 * `bash scripts/build-cluster.sh kwok rbg` and `bash scripts/install-sglang-router.sh`.
 */
import { routerRollout } from '../support/rbg-router-rollout';
import { RoutedGroupSuite, startRoutedGroupSuite } from '../support/routed-group-suite';

let suite: RoutedGroupSuite;

beforeAll(async () => {
  suite = await startRoutedGroupSuite('router-pods', 'default');
}, 300_000);

afterAll(() => suite?.stop(), 60_000);

test('40/20 under rayshift\'s routing: no request served by a mixed pair, none failed by either release\'s router', () =>
  suite.ctx.cluster.printLogsOnFailure(async () => {
    const shape = { name: 'pd40', namespace: 'default', replicas: { prefill: 40, decode: 20 }, maxSkew: '25%', maxUnavailable: '10%' };
    const run = await routerRollout(suite.ctx, suite.ctx.cluster, suite.supervisor, suite.dir, shape, 'rayshift', 2);
    process.stdout.write(`routed 40/20 with the Pods' workers: weights ${run.weights}; ${run.result.statuses.length} requests (${run.result.sent.v2 ?? 0} to v2), ${run.mixed} by a mixed pair, failed ${JSON.stringify(run.result.failed)}; rollout ${run.wallMs} ms\n`);
    expect(run.mixed).toBe(0);
    // No router fails a request: each routed role keeps its last old replica until the route, as
    // read, has left the old release (lib/engine/rbg-router-hold.ts), so the old router never loses
    // its last pair while it still gets traffic.
    expect(run.result.failed).toEqual({});
    expect(run.served).toBeGreaterThan(0);
    expect(run.result.sent.v2).toBeGreaterThan(0);
    expect(run.weights.split(' → ').pop()).toBe('100');
  }), 600_000);
