/**
 * WatchUpgrade's limits and lifetime with a fake Kubernetes client: `heartbeat_seconds` bounded
 * (INVALID_ARGUMENT naming the field, value and range), the caller's client held open while a watch
 * runs and closed once idle after it (fake clock), and the token re-checked on its own schedule even
 * while events keep arriving, ending the stream with UNAUTHENTICATED once it fails.
 */
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError, createContextValues, createHandlerContext } from '@connectrpc/connect';
import { REQUEST_SCOPE, type RequestScope } from '../../lib/apiserver/auth/request-scope';
import { BadRequestSchema } from '../../lib/apiserver/gen/google/rpc/error_details_pb';
import { RayServiceService, WatchUpgradeRequestSchema } from '../../lib/apiserver/gen/rayshift/v1/rayservice_service_pb';
import { rayServiceUpgrade } from '../../lib/apiserver/handlers/rayservice-upgrade';
import { ImpersonatingClients } from '../../lib/apiserver/kube/impersonation';
import type { KubeClient } from '../../lib/runtime/kube/client';
import type { RawWatchEvent } from '../../lib/runtime/kube/request-options';
import { loadClientNode } from '../../lib/runtime/kube/client-node';
import type { KubeObject } from '../../lib/runtime/kube/types';
import { rayService } from '../support/operator-env';

const stored = (): KubeObject => ({ ...rayService('ns', 'svc'), metadata: { name: 'svc', namespace: 'ns', resourceVersion: '10', generation: 1 } });

/** A client holding one RayService whose watch delivers an unchanged MODIFIED event every `everyMs`. */
function fakeKube(everyMs: number) {
  const kube = {
    async get() {
      return stored();
    },
    async watchStream(_type: unknown, _opts: unknown, onEvent: (e: RawWatchEvent) => void) {
      let rv = 10;
      let stop = () => undefined as void;
      const done = new Promise<void>((resolve) => (stop = resolve));
      const timer = setInterval(() => onEvent({ type: 'MODIFIED', object: { ...stored(), metadata: { ...stored().metadata, resourceVersion: String(++rv) } } }), everyMs);
      return {
        status: 200,
        done,
        abort() {
          clearInterval(timer);
          stop();
        },
      };
    },
  };
  return kube as unknown as KubeClient;
}

/** A scope over `kube` whose token stops passing once `revoke()` is called; counts holds of its client. */
function scopeFor(kube: KubeClient) {
  let revoked = false;
  let rechecks = 0;
  const state = { holds: 0, rechecks: () => rechecks, revoke: () => (revoked = true) };
  const scope: RequestScope = {
    caller: { username: 'alice', groups: [], extra: {} },
    kube,
    authorize: async () => undefined,
    allows: async () => true,
    async revalidate() {
      rechecks++;
      if (revoked) throw new ConnectError('the token is not valid for audience rayshift', Code.Unauthenticated);
    },
    keepAlive() {
      state.holds++;
      return () => state.holds--;
    },
  };
  const abort = new AbortController();
  const ctx = createHandlerContext({
    service: RayServiceService,
    method: RayServiceService.method.watchUpgrade,
    protocolName: 'connect',
    requestMethod: 'POST',
    url: 'http://localhost/rayshift.v1.RayServiceService/WatchUpgrade',
    contextValues: createContextValues().set(REQUEST_SCOPE, scope),
    requestSignal: abort.signal,
  });
  return { ctx, state };
}

const watchRequest = (heartbeatSeconds = 0) => create(WatchUpgradeRequestSchema, { namespace: 'ns', name: 'svc', heartbeatSeconds });

test('heartbeat_seconds above the maximum (or below 0) is INVALID_ARGUMENT naming the field, value and range', async () => {
  const { ctx } = scopeFor(fakeKube(1_000));
  for (const heartbeatSeconds of [3_000_000, 3601, -1]) {
    const stream = rayServiceUpgrade().watchUpgrade(watchRequest(heartbeatSeconds), ctx)[Symbol.asyncIterator]();
    const failure = await stream.next().then(
      () => undefined,
      (e: unknown) => ConnectError.from(e),
    );
    expect(failure?.code).toBe(Code.InvalidArgument);
    expect(failure?.rawMessage).toContain(`heartbeat_seconds must be between 0 (the server's default) and 3600 seconds; got ${heartbeatSeconds}`);
    expect(failure?.findDetails(BadRequestSchema)[0]?.fieldViolations.map((v) => v.field)).toEqual(['heartbeat_seconds']);
  }
});

test('the watch holds the caller client open while it runs and releases it when it ends', async () => {
  const { ctx, state } = scopeFor(fakeKube(1_000));
  const stream = rayServiceUpgrade().watchUpgrade(watchRequest(3600), ctx)[Symbol.asyncIterator]();
  expect((await stream.next()).value).toMatchObject({ status: { resourceVersion: '10' } });
  expect(state.holds).toBe(1);
  await stream.return?.(undefined);
  expect(state.holds).toBe(0);
});

test('a held client outlives the idle period; released, it is closed after one', () => {
  jest.useFakeTimers();
  try {
    const kc = new (loadClientNode().KubeConfig)();
    kc.loadFromOptions({ clusters: [{ name: 'c', server: 'https://127.0.0.1:9' }], users: [{ name: 'u', token: 't' }], contexts: [{ name: 'c', cluster: 'c', user: 'u' }], currentContext: 'c' });
    const clients = new ImpersonatingClients(kc, { idleMs: 1_000 });
    const alice = { username: 'alice', groups: [], extra: {} };
    const client = clients.for(alice);
    const release = clients.hold(alice);
    jest.advanceTimersByTime(60_000);
    expect(clients.for(alice)).toBe(client);
    release();
    jest.advanceTimersByTime(1_001);
    expect(clients.for(alice)).not.toBe(client);
    clients.close();
  } finally {
    jest.useRealTimers();
  }
});

test('the token is re-checked on schedule while events keep arriving; a failed re-check ends the stream UNAUTHENTICATED', async () => {
  const { ctx, state } = scopeFor(fakeKube(5));
  const stream = rayServiceUpgrade({ tokenRecheckSeconds: 0.02 }).watchUpgrade(watchRequest(3600), ctx)[Symbol.asyncIterator]();
  await stream.next();
  state.revoke();
  const failure = await stream.next().then(
    () => undefined,
    (e: unknown) => ConnectError.from(e),
  );
  expect(failure?.code).toBe(Code.Unauthenticated);
  expect(state.rechecks()).toBeGreaterThan(0);
  expect(state.holds).toBe(0);
}, 5_000);
