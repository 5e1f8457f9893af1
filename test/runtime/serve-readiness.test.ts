/**
 * Pure tests of the Serve readiness predicate, capacity rounding and GET parsing, on JSON fixtures
 * written from the shapes documented in ray-local.md §2 (no HTTP).
 */
import { capacityAdjustedReplicas } from '../../lib/runtime/serve/capacity';
import { evaluateCapacityReadiness, observeServe } from '../../lib/runtime/serve/readiness';
import { ServeShapeError, parseServeInstanceDetails } from '../../lib/runtime/serve/types';

/** ray-local.md §2's GET body: app DEPLOYING, Version UPSCALING 1 → 2 at target_capacity 50. */
function upscaling(): Record<string, unknown> {
  return {
    controller_info: { node_id: 'n1', actor_id: 'a1' },
    proxy_location: 'HeadOnly',
    http_options: { host: '127.0.0.1', port: 8001 },
    grpc_options: { port: 9001, grpc_servicer_functions: [] },
    proxies: { n1: { status: 'HEALTHY' } },
    deploy_mode: 'MULTI_APP',
    target_capacity: 50.0,
    target_groups: [],
    applications: {
      web: {
        name: 'web',
        route_prefix: '/',
        status: 'DEPLOYING',
        message: '',
        last_deployed_time_s: 1760000000.5,
        deployed_app_config: { name: 'web', import_path: 'rayshift_testapp.app:build' },
        source: 'declarative',
        external_scaler_enabled: false,
        deployments: {
          Version: {
            name: 'Version',
            status: 'UPSCALING',
            status_trigger: 'CONFIG_UPDATE_STARTED',
            message: 'Upscaling from 1 to 2 replicas.',
            target_num_replicas: 2,
            deployment_config: { name: 'Version', num_replicas: 4, max_ongoing_requests: 5 },
            required_resources: { CPU: 1 },
            replicas: [
              { replica_id: 'r1', state: 'RUNNING', pid: 123, start_time_s: 1, node_ip: '10.0.0.1', actor_id: 'x' },
              { replica_id: 'r2', state: 'STARTING', pid: 124, start_time_s: 2, node_ip: '10.0.0.1', actor_id: 'y' },
            ],
          },
        },
      },
    },
  };
}

/** The same after the upscale completed. */
function upscaled(): Record<string, unknown> {
  const body = upscaling() as any;
  const app = body.applications.web;
  app.status = 'RUNNING';
  Object.assign(app.deployments.Version, { status: 'HEALTHY', status_trigger: 'UPSCALE_COMPLETED', message: '' });
  app.deployments.Version.replicas[1].state = 'RUNNING';
  return body;
}

const NO_SERVE = { deploy_mode: 'MULTI_APP', controller_info: {}, proxies: {}, applications: {}, target_capacity: null };

describe('capacityAdjustedReplicas (Ray get_capacity_adjusted_num_replicas)', () => {
  test.each([
    [3, null, 3],
    [3, 100, 3],
    [3, 0, 0],
    [3, 20, 1], // 0.6 -> 1
    [3, 50, 2], // 1.5 -> 2 (half up, not half to even)
    [5, 50, 3], // 2.5 -> 3
    [4, 10, 1], // 0.4 -> 0 -> max(1, 0)
    [3, 1, 1],
    [0, 50, 0],
    [1, 50, 1], // 0.5 -> 1
    [10, 25, 3], // 2.5 -> 3
    [7, 30, 2], // 2.1 -> 2
    [2, 12.5, 1], // 0.25 -> max(1, 0)
    [12, 12.5, 2], // 1.5 -> 2
    [100, 99, 99],
  ])('n=%p at tc=%p -> %p', (n, tc, want) => {
    expect(capacityAdjustedReplicas(n, tc)).toBe(want);
  });

  test('rejects values Ray would not accept', () => {
    expect(() => capacityAdjustedReplicas(-1, 50)).toThrow(RangeError);
    expect(() => capacityAdjustedReplicas(1.5, 50)).toThrow(RangeError);
    expect(() => capacityAdjustedReplicas(3, 101)).toThrow(/between 0 and 100/);
  });
});

describe('parseServeInstanceDetails', () => {
  test('trims the documented body to the typed subset', () => {
    const d = parseServeInstanceDetails(upscaling());
    expect(d.target_capacity).toBe(50);
    expect(Object.keys(d.applications)).toEqual(['web']);
    const dep = d.applications.web.deployments.Version;
    expect(dep).toMatchObject({ status: 'UPSCALING', target_num_replicas: 2, message: 'Upscaling from 1 to 2 replicas.' });
    expect(dep.replicas).toEqual([
      { replica_id: 'r1', state: 'RUNNING' },
      { replica_id: 'r2', state: 'STARTING' },
    ]);
    expect(d.proxies).toEqual({ n1: { status: 'HEALTHY' } });
  });

  test('accepts the "no Serve yet" body', () => {
    expect(parseServeInstanceDetails(NO_SERVE)).toEqual({ target_capacity: null, applications: {}, proxies: {} });
  });

  test('names the offending field of a malformed body', () => {
    const body = upscaling() as any;
    body.applications.web.deployments.Version.target_num_replicas = '2';
    expect(() => parseServeInstanceDetails(body)).toThrow(ServeShapeError);
    expect(() => parseServeInstanceDetails(body)).toThrow('applications.web.deployments.Version.target_num_replicas');
    expect(() => parseServeInstanceDetails([])).toThrow(/body must be an object/);
    expect(() => parseServeInstanceDetails({ target_capacity: 'x' })).toThrow(/target_capacity/);
  });
});

describe('evaluateCapacityReadiness', () => {
  const parse = (b: unknown) => parseServeInstanceDetails(b);

  test('documented UPSCALING state: not ready, counts reported', () => {
    const r = evaluateCapacityReadiness(parse(upscaling()), { targetCapacity: 50 });
    expect(r).toMatchObject({ ready: false, readyReplicas: 1, targetReplicas: 2, failed: false });
    expect(r.reason).toContain('deployment "web/Version"');
    expect(r.reason).toMatch(/UPSCALING \(Upscaling from 1 to 2 replicas\.\); 1\/2 replicas RUNNING/);
  });

  test('ready once HEALTHY, counts reached and the app RUNNING', () => {
    const r = evaluateCapacityReadiness(parse(upscaled()), { targetCapacity: 50 });
    expect(r).toMatchObject({ ready: true, readyReplicas: 2, targetReplicas: 2 });
  });

  test('not ready while the echoed target_capacity differs from the one sent', () => {
    const r = evaluateCapacityReadiness(parse(upscaled()), { targetCapacity: 75 });
    expect(r.ready).toBe(false);
    expect(r.reason).toMatch(/target_capacity is 50, expected 75/);
    const none = evaluateCapacityReadiness(parse(upscaled()), { targetCapacity: null });
    expect(none.reason).toMatch(/target_capacity is 50, expected null/);
  });

  test('a stale tick (echo updated, old target still HEALTHY) is caught by the num_replicas check', () => {
    // PUT tc=75 with num_replicas 4 expects adj(4,75)=3; the GET still shows the tc=50 target of 2.
    const body = upscaled() as any;
    body.target_capacity = 75;
    const fromGet = evaluateCapacityReadiness(parse(body), { targetCapacity: 75 });
    expect(fromGet.ready).toBe(false);
    expect(fromGet.reason).toMatch(/targets 2 replicas, expected 3 at target_capacity 75/);
    // The sent config wins over a stale deployment_config (num_replicas changed 4 -> 6: adj(6,50)=3).
    const sent = { applications: [{ name: 'web', import_path: 'x.y:z', deployments: [{ name: 'Version', num_replicas: 6 }] }] };
    const fromSent = evaluateCapacityReadiness(parse(upscaled()), { targetCapacity: 50, config: sent });
    expect(fromSent.ready).toBe(false);
    expect(fromSent.reason).toMatch(/expected 3/);
  });

  test('an application of the sent config that does not exist yet blocks readiness', () => {
    const sent = { applications: [{ name: 'web', import_path: 'a:b' }, { name: 'grpc', import_path: 'c:d', route_prefix: '/g' }] };
    const r = evaluateCapacityReadiness(parse(upscaled()), { targetCapacity: 50, config: sent });
    expect(r.ready).toBe(false);
    expect(r.reason).toMatch(/application "grpc" of the sent config does not exist yet/);
  });

  test('only RUNNING replicas count (STOPPING ones linger in replicas[])', () => {
    const body = upscaled() as any;
    const dep = body.applications.web.deployments.Version;
    dep.replicas[1].state = 'STOPPING';
    const r = evaluateCapacityReadiness(parse(body), { targetCapacity: 50 });
    expect(r).toMatchObject({ ready: false, readyReplicas: 1, targetReplicas: 2 });
    expect(r.reason).toMatch(/1\/2 replicas RUNNING/);
  });

  test('apps RUNNING alone is not enough: a deployment still UPDATING blocks', () => {
    const body = upscaled() as any;
    body.applications.web.deployments.Version.status = 'UPDATING';
    expect(evaluateCapacityReadiness(parse(body), { targetCapacity: 50 }).ready).toBe(false);
  });

  test('target_capacity 0: zero replicas is ready', () => {
    const body = upscaled() as any;
    body.target_capacity = 0;
    Object.assign(body.applications.web.deployments.Version, { target_num_replicas: 0, replicas: [] });
    expect(evaluateCapacityReadiness(parse(body), { targetCapacity: 0 })).toMatchObject({
      ready: true,
      readyReplicas: 0,
      targetReplicas: 0,
    });
  });

  test('autoscaling deployments are checked against [adj(min), adj(max)]', () => {
    const body = upscaled() as any;
    const dep = body.applications.web.deployments.Version;
    dep.deployment_config = { name: 'Version', autoscaling_config: { min_replicas: 2, max_replicas: 4 } };
    expect(evaluateCapacityReadiness(parse(body), { targetCapacity: 50 }).ready).toBe(true); // [1, 2]
    body.target_capacity = 25;
    const r = evaluateCapacityReadiness(parse(body), { targetCapacity: 25 }); // [1, 1]
    expect(r.ready).toBe(false);
    expect(r.reason).toMatch(/outside \[1, 1\]/);
  });

  test('DEPLOY_FAILED is reported as failed', () => {
    const body = upscaled() as any;
    Object.assign(body.applications.web, { status: 'DEPLOY_FAILED', message: "ModuleNotFoundError: No module named 'nope'", deployments: {} });
    const r = evaluateCapacityReadiness(parse(body), { targetCapacity: 50 });
    expect(r).toMatchObject({ ready: false, failed: true });
    expect(r.reason).toMatch(/DEPLOY_FAILED: ModuleNotFoundError/);
  });

  test('no Serve yet: not ready', () => {
    expect(evaluateCapacityReadiness(parse(NO_SERVE), { targetCapacity: null })).toMatchObject({
      ready: false,
      readyReplicas: 0,
      targetReplicas: 0,
      reason: 'no Serve application exists yet',
    });
  });

  test('proxies: STARTING/UNHEALTHY block, DRAINING does not', () => {
    const body = upscaled() as any;
    body.proxies = { n1: { status: 'HEALTHY' }, n2: { status: 'DRAINING' } };
    expect(evaluateCapacityReadiness(parse(body), { targetCapacity: 50 }).ready).toBe(true);
    body.proxies.n3 = { status: 'UNHEALTHY' };
    expect(evaluateCapacityReadiness(parse(body), { targetCapacity: 50 }).reason).toMatch(/proxy on node n3 is UNHEALTHY/);
  });
});

describe('observeServe (engine ObservedCluster fields)', () => {
  test('null target_capacity reads as 100; no application reads as undefined', () => {
    const body = upscaled() as any;
    body.target_capacity = null;
    expect(observeServe(parseServeInstanceDetails(body))).toEqual({
      targetCapacity: 100,
      appsRunning: true,
      readyReplicas: 2,
      targetReplicas: 2,
      headProxyHealthy: true,
    });
    expect(observeServe(parseServeInstanceDetails(NO_SERVE))).toEqual({ appsRunning: false, readyReplicas: 0, targetReplicas: 0, headProxyHealthy: false });
    expect(observeServe(parseServeInstanceDetails(upscaling()))).toMatchObject({ targetCapacity: 50, appsRunning: false, readyReplicas: 1 });
  });

  test('the head proxy is the one on the controller\'s node (Serve pins its controller to the head): healthy only while that proxy is HEALTHY', () => {
    const body = upscaled() as any;
    body.proxies = { n1: { status: 'STARTING' }, n2: { status: 'HEALTHY' } };
    expect(observeServe(parseServeInstanceDetails(body)).headProxyHealthy).toBe(false);
    body.proxies = { n1: { status: 'HEALTHY' }, n2: { status: 'UNHEALTHY' } };
    expect(observeServe(parseServeInstanceDetails(body)).headProxyHealthy).toBe(true);
    body.controller_info = { node_id: 'n3' }; // no proxy reported on the controller's node
    expect(observeServe(parseServeInstanceDetails(body)).headProxyHealthy).toBe(false);
  });

  test('controller_info.node_id that is not a string is refused, naming the field', () => {
    const body = upscaled() as any;
    body.controller_info = { node_id: 7 };
    expect(() => parseServeInstanceDetails(body)).toThrow(new ServeShapeError('controller_info.node_id', 'must be a string; got a number'));
  });
});
