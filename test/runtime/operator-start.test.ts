/**
 * The operator's watches over a scripted Transport: building an `Operator` starts nothing (a standby
 * replica before it leads, or one that is never started, holds no watch and no timer); `start()`
 * lists and watches every type it caches; `stop()` ends the watches.
 */
import { KubeClient } from '../../lib/runtime/kube/client';
import { Operator } from '../../operator/operator';
import { ScriptedTransport } from '../support/scripted-transport';

const SILENT = { info: () => undefined, warn: () => undefined, debug: () => undefined, error: () => undefined };
const resolver = { resolve: () => 'http://127.0.0.1:1' };

test('an operator that is built but not started sends no request, opens no watch and arms no timer', async () => {
  jest.useFakeTimers({ now: 0 });
  try {
    const t = new ScriptedTransport({});
    const operator = new Operator({ client: new KubeClient(t), resolver, log: SILENT });
    // No timer is armed, so nothing can start later; an hour of the clock (and its promise jobs) sends nothing.
    expect(jest.getTimerCount()).toBe(0);
    await jest.advanceTimersByTimeAsync(3_600_000);
    expect(t.requests).toEqual([]);
    expect(t.streams).toEqual([]);
    expect(operator.ready()).toBe(false);
    await operator.stop();
  } finally {
    jest.useRealTimers();
  }
});

test('start() lists and watches RayServices, their RayClusters and Services, routes, Gateways, head Pods and serve EndpointSlices, then is ready', async () => {
  const t = new ScriptedTransport({});
  const operator = new Operator({ client: new KubeClient(t), resolver, log: SILENT });
  await operator.start();
  expect(operator.ready()).toBe(true);
  const plurals = (paths: string[]) => paths.map((p) => /\/([a-z]+)\?/.exec(p)?.[1]).sort();
  const expected = ['endpointslices', 'gateways', 'grpcroutes', 'httproutes', 'pods', 'rayclusters', 'rayservices', 'services'];
  expect(plurals(t.requests)).toEqual(expected);
  expect(plurals(t.streams)).toEqual(expected);
  // Only head Pods, and only the EndpointSlices of RayService-owned Services (their Services' labels).
  const selectorOf = (plural: string) => decodeURIComponent(/labelSelector=([^&]*)/.exec(t.requests.find((p) => p.includes(`/${plural}?`))!)?.[1] ?? '');
  expect([selectorOf('pods'), selectorOf('endpointslices')]).toEqual(['ray.io/node-type=head', 'ray.io/originated-from-crd=RayService']);
  await operator.stop();
});
