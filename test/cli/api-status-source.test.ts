/**
 * `rayshift status --api-server` renders what the kubeconfig path renders: the object rebuilt from
 * the API's answers (through the protobuf wire format) gives the same screen, line and JSON, and
 * the watch re-reads the spec on a new generation, resumes after a completed upgrade and reports a deletion.
 */
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import type { ApiClient } from '../../lib/apiserver/client';
import { rayServiceFromKube } from '../../lib/apiserver/convert/rayservice';
import { upgradeStatusOf } from '../../lib/apiserver/convert/upgrade-status';
import { RayServiceSchema, type RayService } from '../../lib/apiserver/gen/rayshift/v1/rayservice_pb';
import { UpgradeEventSchema, UpgradeEventType, type UpgradeEvent } from '../../lib/apiserver/gen/rayshift/v1/upgrade_pb';
import { apiStatusSource } from '../../lib/cli/api-status-source';
import { renderServiceLine, renderServiceScreen, serviceView } from '../../lib/cli/status-view';
import type { Style } from '../../lib/cli/style';
import type { KubeObject } from '../../lib/runtime/kube/types';
import { rayService } from '../support/operator-env';

const plain: Style = { red: (s) => s, yellow: (s) => s, green: (s) => s, dim: (s) => s, bold: (s) => s };
const T = Date.parse('2026-11-21T12:00:00.000Z');

/** The service as Kubernetes returns it, mid-upgrade, at `generation` with `interval` seconds between steps. */
function object(generation: number, interval: number, pendingWeight = 25): KubeObject {
  const obj = rayService('serving', 'llm', { interval });
  obj.metadata = { ...obj.metadata, generation, resourceVersion: String(100 + pendingWeight), uid: 'u' };
  obj.status = {
    observedGeneration: 2,
    phase: 'Upgrading',
    reason: 'WaitingForInterval',
    activeServiceStatus: { rayClusterName: 'llm-aaaaa', targetCapacity: 100, trafficRoutedPercent: 100 - pendingWeight },
    pendingServiceStatus: { rayClusterName: 'llm-bbbbb', targetCapacity: 50, trafficRoutedPercent: pendingWeight },
    conditions: [{ type: 'Ready', status: 'True', reason: 'Serving', lastTransitionTime: '2026-11-21T11:00:00Z' }],
    engineState: {
      phase: 'Upgrading', reason: 'WaitingForInterval', activeClusterName: 'llm-aaaaa', pendingClusterName: 'llm-bbbbb',
      activeTargetCapacity: 100, pendingTargetCapacity: 50, activeWeight: 100 - pendingWeight, pendingWeight,
      trafficConfirmed: true, lastTrafficMigratedTime: T, lastProgressTime: T, deletions: [],
    },
  };
  return obj;
}

/** What the API server answers for `obj`, after the trip over the wire. */
function served(obj: KubeObject): RayService {
  return fromBinary(RayServiceSchema, toBinary(RayServiceSchema, rayServiceFromKube(obj, upgradeStatusOf(obj))));
}

function event(type: UpgradeEventType, obj: KubeObject): UpgradeEvent {
  return fromBinary(UpgradeEventSchema, toBinary(UpgradeEventSchema, create(UpgradeEventSchema, { type, status: upgradeStatusOf(obj) })));
}

/** A client whose Get answers `current()` and whose successive watches yield `streams`. */
function fakeApi(current: () => KubeObject, streams: UpgradeEvent[][]) {
  const calls = { gets: 0, watchedFrom: [] as string[] };
  const api = {
    rayServices: {
      getRayService: async () => {
        calls.gets++;
        return served(current());
      },
      watchUpgrade: async function* (req: { resourceVersion: string }) {
        calls.watchedFrom.push(req.resourceVersion);
        yield* streams.shift() ?? [];
      },
    },
  } as unknown as ApiClient;
  return { api, calls };
}

test('the object rebuilt from GetRayService renders exactly like the object itself', async () => {
  const obj = object(2, 30);
  const rebuilt = (await apiStatusSource(fakeApi(() => obj, []).api, 'serving', 'llm').read())!;
  expect(renderServiceScreen(serviceView(rebuilt), T + 12_300, plain)).toEqual(renderServiceScreen(serviceView(obj), T + 12_300, plain));
  expect(renderServiceScreen(serviceView(rebuilt), T, plain).join('\n')).toContain('next traffic step in 30.0s');
  expect(renderServiceLine(serviceView(rebuilt), T)).toBe(renderServiceLine(serviceView(obj), T));
  expect(JSON.stringify(rebuilt.status, null, 2)).toBe(JSON.stringify(obj.status, null, 2)); // what --json prints, key order included
});

test('a missing service reads as undefined', async () => {
  const api = { rayServices: { getRayService: async () => Promise.reject(new ConnectError('RayService llm in namespace serving not found', Code.NotFound)) } } as unknown as ApiClient;
  expect(await apiStatusSource(api, 'serving', 'llm').read()).toBeUndefined();
});

test('the watch re-reads the spec on a new generation, resumes after a completed upgrade and reports a deletion', async () => {
  let current = object(2, 30);
  const changed = object(3, 10, 50);
  const { api, calls } = fakeApi(() => current, [
    [event(UpgradeEventType.SNAPSHOT, current), event(UpgradeEventType.PROGRESS, changed), event(UpgradeEventType.COMPLETED, changed)],
    [event(UpgradeEventType.DELETED, changed)],
  ]);
  const source = apiStatusSource(api, 'serving', 'llm');
  await source.read();
  current = changed;
  const seen: KubeObject[] = [];
  const ended = new Promise<string>((resolve) => {
    source.follow({ changed: (o) => seen.push(o), deleted: () => resolve('deleted'), failed: (e) => resolve(`failed: ${String(e)}`) });
  });
  expect(await ended).toBe('deleted');
  expect(calls.gets).toBe(2); // the first read, then once for generation 3
  expect(calls.watchedFrom).toEqual(['', '150']);
  expect(seen.map((o) => serviceView(o).intervalSeconds)).toEqual([30, 10, 10]);
  expect(renderServiceLine(serviceView(seen[1]), T)).toBe(renderServiceLine(serviceView(changed), T));
});
