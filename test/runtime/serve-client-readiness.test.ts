/**
 * Readiness of new Serve capacity through the Ray dashboard client, against the TEST-ONLY simulated
 * dashboard over real HTTP: DEPLOYING/UPSCALING, timed replica starts, stale control-loop ticks,
 * Ray's rounding of target_num_replicas, autoscaling bounds and failed deployments.
 */
import { evaluateCapacityReadiness } from '../../lib/runtime/serve/readiness';
import { CLUSTER, SERVE_CONFIG_V2, clientFor, closeServers, simulator } from './support/serve-client-harness';
import { waitFor } from '../support/wait-at-most';

afterEach(closeServers);

describe('readiness of new capacity against the simulator', () => {
  test('DEPLOYING/UPSCALING are not ready; ready only with counts reached and the capacity echoed', async () => {
    const sim = await simulator({ manualReplicaStart: true });
    const client = clientFor(sim);

    let sent = await client.putServeConfig(CLUSTER, SERVE_CONFIG_V2, 20);
    let r = await client.getCapacityReadiness(CLUSTER, { targetCapacity: 20, config: sent });
    expect(r).toMatchObject({ ready: false, readyReplicas: 0, targetReplicas: 1 });
    expect(r.details.applications.web.status).toBe('DEPLOYING');
    expect(r.details.applications.web.deployments.Version.status).toBe('UPDATING');
    expect(sim.releaseReplicas()).toBe(1);
    r = await client.getCapacityReadiness(CLUSTER, { targetCapacity: 20, config: sent });
    expect(r).toMatchObject({ ready: true, readyReplicas: 1, targetReplicas: 1 });

    sent = await client.putServeConfig(CLUSTER, SERVE_CONFIG_V2, 50);
    r = await client.getCapacityReadiness(CLUSTER, { targetCapacity: 50, config: sent });
    expect(r).toMatchObject({ ready: false, readyReplicas: 1, targetReplicas: 2 });
    expect(r.details.applications.web.status).toBe('DEPLOYING');
    expect(r.details.applications.web.deployments.Version).toMatchObject({
      status: 'UPSCALING',
      status_trigger: 'CONFIG_UPDATE_STARTED',
      message: 'Upscaling from 1 to 2 replicas.',
    });
    expect(r.reason).toMatch(/UPSCALING .* 1\/2 replicas RUNNING/);
    // The previous capacity is not "ready" for the new PUT, and vice versa.
    expect(evaluateCapacityReadiness(r.details, { targetCapacity: 20 }).reason).toMatch(/target_capacity is 50, expected 20/);
    sim.releaseReplicas();
    r = await client.getCapacityReadiness(CLUSTER, { targetCapacity: 50, config: sent });
    expect(r).toMatchObject({ ready: true, readyReplicas: 2, targetReplicas: 2 });
    expect(r.details.applications.web.deployments.Version.status_trigger).toBe('UPSCALE_COMPLETED');
    expect(r.details.applications.web.status).toBe('RUNNING');
  });

  test('timed replica start: polls see UPDATING first, then ready', async () => {
    // Long enough that the first poll comes before the replicas start even on a loaded machine.
    const sim = await simulator({ replicaStartDelayMs: 1500 });
    const client = clientFor(sim);
    const sent = await client.putServeConfig(CLUSTER, SERVE_CONFIG_V2, 100);
    const reasons: string[] = [];
    await waitFor(async () => {
      const r = await client.getCapacityReadiness(CLUSTER, { targetCapacity: 100, config: sent });
      reasons.push(r.reason);
      return r.ready;
    }, 'the three replicas to run', { everyMs: 10 });
    expect(reasons[0]).toMatch(/UPDATING; 0\/3 replicas RUNNING/);
    expect(reasons[reasons.length - 1]).toMatch(/3\/3 replicas RUNNING/);
  });

  test('a stale control-loop tick (capacity echoed, old target HEALTHY) is not ready', async () => {
    let clock = 1_000_000;
    const sim = await simulator({ now: () => clock, replicaStartDelayMs: 10, controlLoopLagMs: 100 });
    const client = clientFor(sim);
    let sent = await client.putServeConfig(CLUSTER, SERVE_CONFIG_V2, 20);
    clock += 100;
    expect((await client.getCapacityReadiness(CLUSTER, { targetCapacity: 20, config: sent })).ready).toBe(false);
    clock += 10;
    expect((await client.getCapacityReadiness(CLUSTER, { targetCapacity: 20, config: sent })).ready).toBe(true);

    sent = await client.putServeConfig(CLUSTER, SERVE_CONFIG_V2, 50);
    const stale = await client.getCapacityReadiness(CLUSTER, { targetCapacity: 50, config: sent });
    // What KubeRay-style checks would see: app RUNNING, deployment HEALTHY, running >= target.
    expect(stale.details.target_capacity).toBe(50);
    expect(stale.details.applications.web.status).toBe('RUNNING');
    expect(stale.details.applications.web.deployments.Version).toMatchObject({ status: 'HEALTHY', target_num_replicas: 1 });
    expect(stale).toMatchObject({ ready: false, readyReplicas: 1, targetReplicas: 1 });
    expect(stale.reason).toMatch(/targets 1 replicas, expected 2 at target_capacity 50/);
    clock += 100;
    expect((await client.getCapacityReadiness(CLUSTER, { targetCapacity: 50, config: sent })).details.applications.web.deployments.Version.status).toBe('UPSCALING');
    clock += 10;
    expect(await client.getCapacityReadiness(CLUSTER, { targetCapacity: 50, config: sent })).toMatchObject({ ready: true, readyReplicas: 2 });
  });

  test('Ray rounding of target_num_replicas: 3@20→1, 3@50→2, 3@0→0, 5@50→3, 4@10→1, null→unchanged', async () => {
    const sim = await simulator({
      replicaStartDelayMs: 0,
      code: { 'rounding.app:build': { deployments: [{ name: 'Three', num_replicas: 3 }, { name: 'Five', num_replicas: 5 }, { name: 'Four', num_replicas: 4 }] } },
    });
    const client = clientFor(sim);
    const config = { applications: [{ name: 'r', import_path: 'rounding.app:build' }] };
    const targets = async (tc: number | null) => {
      const sent = await client.putServeConfig(CLUSTER, config, tc);
      const r = await client.getCapacityReadiness(CLUSTER, { targetCapacity: tc, config: sent });
      expect(r.ready).toBe(true);
      const deps = r.details.applications.r.deployments;
      return [deps.Three.target_num_replicas, deps.Five.target_num_replicas, deps.Four.target_num_replicas];
    };
    expect(await targets(20)).toEqual([1, 1, 1]);
    expect(await targets(50)).toEqual([2, 3, 2]);
    expect(await targets(10)).toEqual([1, 1, 1]);
    expect(await targets(0)).toEqual([0, 0, 0]);
    expect(await targets(100)).toEqual([3, 5, 4]);
    expect(await targets(null)).toEqual([3, 5, 4]);
  });

  test('autoscaling bounds follow the capacity, including ray#62682 (floor stuck at initial_replicas)', async () => {
    const sim = await simulator({
      replicaStartDelayMs: 0,
      code: { 'auto.app:build': { deployments: [{ name: 'Auto', autoscaling_config: { min_replicas: 0, initial_replicas: 1, max_replicas: 4 } }] } },
    });
    const client = clientFor(sim);
    const config = { applications: [{ name: 'a', import_path: 'auto.app:build' }] };
    const target = async (tc: number | null) => {
      await client.putServeConfig(CLUSTER, config, tc);
      return (await client.getServeDetails(CLUSTER)).applications.a.deployments.Auto.target_num_replicas;
    };
    expect(await target(0)).toBe(0);
    expect(await target(100)).toBe(1); // direction UP: the floor is initial_replicas, not min_replicas 0
    expect(await target(null)).toBe(0); // the final PUT without target_capacity clears it
  });

  test('a bad import path makes the application DEPLOY_FAILED', async () => {
    const sim = await simulator();
    const client = clientFor(sim);
    const sent = await client.putServeConfig(CLUSTER, SERVE_CONFIG_V2.replace('rayshift_testapp.app:build', 'nosuchpkg.app:build'), 100);
    const r = await client.getCapacityReadiness(CLUSTER, { targetCapacity: 100, config: sent });
    expect(r.details.applications.web.status).toBe('DEPLOY_FAILED');
    expect(r).toMatchObject({ ready: false, failed: true });
    expect(r.reason).toMatch(/No module named 'nosuchpkg'/);
  });
});
