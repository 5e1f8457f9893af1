/** Conditions, retryOnConflict, backoff and typed errors of lib/runtime/kube (no server). */
import { Condition, findCondition, isConditionTrue, kubeTime, mergeConditions, removeCondition, sameConditions, setCondition } from '../../lib/runtime/kube/conditions';
import { KubeApiError, KubeConnectionError, isConflict, isNotFound, isPatchConflict } from '../../lib/runtime/kube/errors';
import { backoffDelay, retryOnConflict } from '../../lib/runtime/kube/retry';

const T0 = new Date('2030-01-01T00:00:00.789Z');
const T1 = new Date('2030-01-01T01:00:00Z');

function conflict(): KubeApiError {
  return KubeApiError.fromResponse('PUT', '/api/v1/namespaces/x/configmaps/a', 409, {
    kind: 'Status',
    apiVersion: 'v1',
    status: 'Failure',
    reason: 'Conflict',
    code: 409,
    message: 'Operation cannot be fulfilled on configmaps "a": the object has been modified; please apply your changes to the latest version and try again',
  });
}

describe('conditions', () => {
  test('kubeTime is RFC 3339 in whole seconds, UTC', () => {
    expect(kubeTime(T0)).toBe('2030-01-01T00:00:00Z');
  });

  test('a new condition gets now; same status keeps lastTransitionTime; a status change moves it', () => {
    const a = setCondition(undefined, { type: 'Ready', status: 'False', reason: 'Starting', observedGeneration: 3 }, T0);
    expect(a).toEqual([{ type: 'Ready', status: 'False', reason: 'Starting', message: '', lastTransitionTime: '2030-01-01T00:00:00Z', observedGeneration: 3 }]);
    const b = setCondition(a, { type: 'Ready', status: 'False', reason: 'StillStarting', message: 'm' }, T1);
    expect(b[0]).toEqual({ type: 'Ready', status: 'False', reason: 'StillStarting', message: 'm', lastTransitionTime: '2030-01-01T00:00:00Z', observedGeneration: 3 });
    const c = setCondition(b, { type: 'Ready', status: 'True', reason: 'Serving', observedGeneration: 4 }, T1);
    expect(c[0]).toMatchObject({ status: 'True', lastTransitionTime: '2030-01-01T01:00:00Z', observedGeneration: 4, message: '' });
    expect(a[0].reason).toBe('Starting'); // inputs untouched
  });

  test('merge keeps order, appends new types; find/isTrue/remove/same', () => {
    const base: Condition[] = [
      { type: 'Ready', status: 'True', reason: 'R', message: '', lastTransitionTime: '2029-01-01T00:00:00Z' },
      { type: 'Progressing', status: 'True', reason: 'P', message: '', lastTransitionTime: '2029-01-01T00:00:00Z' },
    ];
    const merged = mergeConditions(base, [
      { type: 'Progressing', status: 'False', reason: 'Done' },
      { type: 'Degraded', status: 'False', reason: 'Fine' },
      { type: 'Ready', status: 'True', reason: 'R' },
    ], T1);
    expect(merged.map((c) => `${c.type}=${c.status}@${c.lastTransitionTime}`)).toEqual([
      'Ready=True@2029-01-01T00:00:00Z',
      'Progressing=False@2030-01-01T01:00:00Z',
      'Degraded=False@2030-01-01T01:00:00Z',
    ]);
    expect(findCondition(merged, 'Degraded')?.reason).toBe('Fine');
    expect(isConditionTrue(merged, 'Ready')).toBe(true);
    expect(isConditionTrue(merged, 'Progressing')).toBe(false);
    expect(isConditionTrue(merged, 'Missing')).toBe(false);
    expect(removeCondition(merged, 'Ready').map((c) => c.type)).toEqual(['Progressing', 'Degraded']);
    expect(sameConditions(base, mergeConditions(base, [{ type: 'Ready', status: 'True', reason: 'R' }], T1))).toBe(true);
    expect(sameConditions(base, merged)).toBe(false);
    expect(sameConditions(undefined, [])).toBe(true);
  });
});

describe('retryOnConflict', () => {
  const noSleep = { sleep: async () => undefined };

  test('retries 409 Conflict until success, passing the attempt number', async () => {
    const seen: number[] = [];
    const r = await retryOnConflict(async (n) => {
      seen.push(n);
      if (n < 3) throw conflict();
      return 'ok';
    }, noSleep);
    expect(r).toBe('ok');
    expect(seen).toEqual([1, 2, 3]);
  });

  test('gives up after `attempts` and rethrows the last conflict', async () => {
    let calls = 0;
    await expect(
      retryOnConflict(async () => {
        calls++;
        throw conflict();
      }, { attempts: 3, ...noSleep }),
    ).rejects.toMatchObject({ statusCode: 409, reason: 'Conflict' });
    expect(calls).toBe(3);
  });

  test('does not retry other errors, including 409 AlreadyExists and (by default) a failed JSON patch test', async () => {
    for (const err of [
      KubeApiError.fromResponse('POST', '/x', 409, { kind: 'Status', reason: 'AlreadyExists', code: 409, message: 'exists' }),
      KubeApiError.fromResponse('PATCH', '/x', 422, { kind: 'Status', reason: 'Invalid', code: 422, message: 'the server rejected our request due to an error in our request' }),
      KubeApiError.fromResponse('GET', '/x', 404, { kind: 'Status', reason: 'NotFound', code: 404 }),
      new Error('boom'),
    ]) {
      let calls = 0;
      await expect(
        retryOnConflict(async () => {
          calls++;
          throw err;
        }, noSleep),
      ).rejects.toBe(err);
      expect(calls).toBe(1);
    }
  });

  test('waits between attempts per the backoff', async () => {
    const waits: number[] = [];
    let n = 0;
    await retryOnConflict(
      async () => {
        if (++n < 4) throw conflict();
      },
      { backoff: (attempt) => attempt * 100, sleep: async (ms) => void waits.push(ms) },
    );
    expect(waits).toEqual([100, 200, 300]);
    const w2: number[] = [];
    n = 0;
    await retryOnConflict(
      async () => {
        if (++n < 4) throw conflict();
      },
      { backoff: { initialMs: 10, factor: 3, jitter: 0 }, sleep: async (ms) => void w2.push(ms) },
    );
    expect(w2).toEqual([10, 30, 90]);
  });

  test('retries what isConflict names (a failed JSON patch test: 422 without causes) and nothing else; no wait at a 0 ms backoff', async () => {
    const testFailed = { status: 422, body: { details: {} } };
    const schemaInvalid = { status: 422, body: { details: { causes: [{ field: 'spec.rules' }] } } };
    const slept: number[] = [];
    let n = 0;
    const result = await retryOnConflict(
      async (attempt) => {
        if (++n < 3) throw testFailed;
        return attempt;
      },
      { isConflict: isPatchConflict, backoff: () => 0, sleep: async (ms) => void slept.push(ms) },
    );
    expect([result, n, slept]).toEqual([3, 3, []]);
    n = 0;
    await expect(
      retryOnConflict(
        async () => {
          n++;
          throw schemaInvalid;
        },
        { isConflict: isPatchConflict, sleep: async () => undefined },
      ),
    ).rejects.toBe(schemaInvalid);
    expect(n).toBe(1);
  });

  test('backoffDelay grows, caps and jitters within bounds', () => {
    expect(backoffDelay(1, { initialMs: 500, maxMs: 30_000, jitter: 0 })).toBe(500);
    expect(backoffDelay(4, { initialMs: 500, maxMs: 30_000, jitter: 0 })).toBe(4_000);
    expect(backoffDelay(20, { initialMs: 500, maxMs: 30_000, jitter: 0 })).toBe(30_000);
    expect(backoffDelay(1, { initialMs: 1000, jitter: 0.2, maxMs: 5000 }, () => 0)).toBe(800);
    expect(backoffDelay(1, { initialMs: 1000, jitter: 0.2, maxMs: 5000 }, () => 1)).toBe(1200);
  });
});

describe('errors', () => {
  test('KubeApiError from a Status names method, path (no query), code, reason and the server message', () => {
    const e = KubeApiError.fromResponse('GET', '/api/v1/namespaces/x/pods?limit=1&labelSelector=a', 403, {
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      message: 'pods is forbidden: User "bob" cannot list resource "pods"',
      reason: 'Forbidden',
      details: { kind: 'pods' },
      code: 403,
    });
    expect(e).toBeInstanceOf(Error);
    expect(e.message).toBe('GET /api/v1/namespaces/x/pods: HTTP 403 Forbidden: pods is forbidden: User "bob" cannot list resource "pods"');
    expect(e).toMatchObject({ statusCode: 403, reason: 'Forbidden', isForbidden: true, path: '/api/v1/namespaces/x/pods', details: { kind: 'pods' } });
    expect(JSON.parse(JSON.stringify(e))).toEqual({
      name: 'KubeApiError',
      statusCode: 403,
      reason: 'Forbidden',
      message: 'pods is forbidden: User "bob" cannot list resource "pods"',
      method: 'GET',
      path: '/api/v1/namespaces/x/pods',
    });
  });

  test('non-Status bodies: text is kept short, the reason comes from the code', () => {
    const e = KubeApiError.fromResponse('GET', '/x', 503, 'x'.repeat(2000));
    expect(e.reason).toBe('ServiceUnavailable');
    expect(e.serverMessage.length).toBe(500);
    expect(KubeApiError.fromResponse('GET', '/x', 410, undefined)).toMatchObject({ reason: 'Expired', isGone: true });
  });

  test('predicates', () => {
    expect(isConflict(conflict())).toBe(true);
    expect(isNotFound(conflict())).toBe(false);
    expect(isNotFound(KubeApiError.fromResponse('GET', '/x', 404, { kind: 'Status', code: 404, reason: 'NotFound' }))).toBe(true);
    expect(isConflict(new Error('x'))).toBe(false);
    const c = new KubeConnectionError('GET', '/api?watch=1', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }));
    expect(c.message).toBe('GET /api: ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:1');
    expect(c.code).toBe('ECONNREFUSED');
  });
});
