/**
 * Authentication pieces with a fake Kubernetes transport: TokenReview with the audience (cached by
 * token hash, one review for concurrent calls), SubjectAccessReview, impersonation headers, the
 * bounded transport and the expiring cache.
 */
import { Code, type ConnectError } from '@connectrpc/connect';
import { AccessReviewer } from '../../lib/apiserver/auth/access-reviewer';
import { ExpiringCache } from '../../lib/apiserver/auth/expiring-cache';
import { TokenAuthenticator } from '../../lib/apiserver/auth/token-authenticator';
import { impersonationHeaders } from '../../lib/apiserver/kube/impersonation';
import { LimitedTransport } from '../../lib/apiserver/kube/limited-transport';
import { KubeClient } from '../../lib/runtime/kube/client';
import type { HttpRequest, HttpResponse, Transport } from '../../lib/runtime/kube/transport';

/** A transport answering every request with `answer(body)` after `release()` when gated. */
class FakeTransport implements Transport {
  readonly server = 'https://fake';
  readonly bodies: any[] = [];
  running = 0;
  maxRunning = 0;
  #gate: Promise<void> = Promise.resolve();
  #open: () => void = () => undefined;

  constructor(private readonly answer: (body: any) => unknown) {}

  hold(): void {
    this.#gate = new Promise((r) => (this.#open = r));
  }

  release(): void {
    this.#open();
  }

  async request(req: HttpRequest): Promise<HttpResponse> {
    this.running++;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    const body = req.body ? JSON.parse(req.body) : undefined;
    this.bodies.push(body);
    await this.#gate;
    this.running--;
    return { status: 201, headers: { 'content-type': 'application/json' }, text: JSON.stringify(this.answer(body)) };
  }

  stream(): never {
    throw new Error('no streams');
  }

  close(): void {}
}

const alice = { username: 'alice', uid: 'u1', groups: ['devs', 'system:authenticated'], extra: { 'authentication.kubernetes.io/credential-id': ['JTI=1'] } };

test('a token is accepted only when TokenReview authenticates it for the audience; answers are cached and shared', async () => {
  const fake = new FakeTransport((b) => ({ status: b.spec.token === 'good' ? { authenticated: true, audiences: ['rayshift'], user: alice } : b.spec.token === 'other-aud' ? { authenticated: true, audiences: ['kubernetes'], user: alice } : { authenticated: false } }));
  const auth = new TokenAuthenticator(new KubeClient(fake));
  fake.hold();
  const both = Promise.all([auth.authenticate('Bearer good'), auth.authenticate('bearer good')]);
  await new Promise((r) => setImmediate(r));
  fake.release();
  expect(await both).toEqual([alice, alice]);
  expect(await auth.authenticate('Bearer good')).toEqual(alice);
  expect(fake.bodies).toEqual([{ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: 'good', audiences: ['rayshift'] } }]);
  await expect(auth.authenticate('Bearer other-aud')).rejects.toMatchObject({ code: Code.Unauthenticated });
  await expect(auth.authenticate('Bearer bad')).rejects.toMatchObject({ code: Code.Unauthenticated });
  await expect(auth.authenticate('Basic abc')).rejects.toMatchObject({ code: Code.Unauthenticated });
  await expect(auth.authenticate(undefined)).rejects.toMatchObject({ code: Code.Unauthenticated });
});

test('a failing TokenReview is UNAVAILABLE, not UNAUTHENTICATED, and is not cached', async () => {
  let fail = true;
  const fake = new FakeTransport(() => ({ status: { authenticated: true, audiences: ['rayshift'], user: alice } }));
  const client = new KubeClient({ ...fake, server: fake.server, stream: fake.stream, close: fake.close, request: async (r) => (fail ? { status: 503, headers: {}, text: 'down' } : fake.request(r)) });
  const auth = new TokenAuthenticator(client);
  await expect(auth.authenticate('Bearer t')).rejects.toMatchObject({ code: Code.Unavailable });
  fail = false;
  expect((await auth.authenticate('Bearer t')).username).toBe('alice');
});

test('SubjectAccessReview carries the whole user and the virtual subresource', async () => {
  const fake = new FakeTransport((b) => ({ status: { allowed: b.spec.resourceAttributes.subresource === 'promote' } }));
  const reviewer = new AccessReviewer(new KubeClient(fake));
  const attrs = { group: 'rayshift.dev', resource: 'rayservices', verb: 'update', namespace: 'ns', name: 'svc' };
  await reviewer.require(alice, { ...attrs, subresource: 'promote' });
  await expect(reviewer.require(alice, { ...attrs, subresource: 'abort' })).rejects.toMatchObject({ code: Code.PermissionDenied });
  expect(fake.bodies[0].spec).toEqual({ user: 'alice', uid: 'u1', groups: alice.groups, extra: alice.extra, resourceAttributes: { ...attrs, subresource: 'promote' } });
});

test('impersonation headers come from the reviewed user only', () => {
  expect(impersonationHeaders(alice)).toEqual({
    'Impersonate-User': 'alice',
    'Impersonate-Uid': 'u1',
    'Impersonate-Group': ['devs'],
    'Impersonate-Extra-authentication.kubernetes.io%2Fcredential-id': ['JTI=1'],
  });
});

test('a ServiceAccount is impersonated by name alone; a user named like one but with other groups is not', () => {
  const sa = {
    username: 'system:serviceaccount:team-a:deployer',
    uid: 'sa-uid',
    groups: ['system:serviceaccounts', 'system:serviceaccounts:team-a', 'system:authenticated'],
    extra: { 'authentication.kubernetes.io/credential-id': ['JTI=2'], 'authentication.kubernetes.io/pod-name': ['p'] },
  };
  expect(impersonationHeaders(sa)).toEqual({ 'Impersonate-User': 'system:serviceaccount:team-a:deployer' });
  // kube-apiserver would give it the ServiceAccount groups instead of these: every header is sent.
  const odd = { ...sa, groups: ['system:serviceaccounts', 'system:serviceaccounts:team-a', 'admins'] };
  expect(impersonationHeaders(odd)['Impersonate-Group']).toEqual(odd.groups);
  expect(impersonationHeaders(odd)['Impersonate-Uid']).toBe('sa-uid');
});

test('the limited transport runs at most `limit` requests at once and all complete', async () => {
  const fake = new FakeTransport(() => ({}));
  const limited = new LimitedTransport(fake, 3);
  fake.hold();
  const all = Promise.all(Array.from({ length: 10 }, () => limited.request({ method: 'GET', path: '/x' })));
  await new Promise((r) => setImmediate(r));
  expect(fake.running).toBe(3);
  fake.release();
  expect(await all).toHaveLength(10);
  expect(fake.maxRunning).toBe(3);
});

test('the expiring cache forgets after its time to live and keeps at most its size', () => {
  let now = 0;
  const cache = new ExpiringCache<number>(100, 2, () => now);
  cache.set('a', 1);
  cache.set('b', 2);
  cache.set('c', 3);
  expect([cache.get('a'), cache.get('b'), cache.get('c')]).toEqual([undefined, 2, 3]);
  now = 100;
  expect(cache.get('b')).toBeUndefined();
});

test('a flood of new garbage tokens from one address costs a bounded number of TokenReviews; others are not slowed', async () => {
  let now = 0;
  const fake = new FakeTransport((b) => ({ status: b.spec.token === 'good' ? { authenticated: true, audiences: ['rayshift'], user: alice } : { authenticated: false } }));
  const auth = new TokenAuthenticator(new KubeClient(fake), { failures: { burst: 5, perSecond: 1 }, now: () => now });
  const codes: (Code | 'accepted')[] = [];
  for (let i = 0; i < 50; i++) codes.push(await auth.authenticate(`Bearer garbage-${i}`, '10.0.0.1').then(() => 'accepted' as const, (e: ConnectError) => e.code));
  expect(codes.slice(0, 5)).toEqual(Array(5).fill(Code.Unauthenticated));
  expect(new Set(codes.slice(5))).toEqual(new Set([Code.ResourceExhausted]));
  expect(fake.bodies).toHaveLength(5);
  // Another address, and a refused token already cached, cost nothing from the flooded budget.
  expect((await auth.authenticate('Bearer good', '10.0.0.2')).username).toBe('alice');
  await expect(auth.authenticate('Bearer garbage-0', '10.0.0.1')).rejects.toMatchObject({ code: Code.Unauthenticated });
  // The budget comes back with time.
  now += 2_000;
  await expect(auth.authenticate('Bearer garbage-new', '10.0.0.1')).rejects.toMatchObject({ code: Code.Unauthenticated });
  expect(fake.bodies).toHaveLength(7);
});

test('garbage from an address never locks out a token accepted from it: it is reviewed again when its cached answer expires', async () => {
  let now = 0;
  const fake = new FakeTransport((b) => ({ status: b.spec.token === 'good' ? { authenticated: true, audiences: ['rayshift'], user: alice } : { authenticated: false } }));
  const auth = new TokenAuthenticator(new KubeClient(fake), { cacheTtlMs: 1_000, failures: { burst: 3, perSecond: 0.001 }, now: () => now });
  expect((await auth.authenticate('Bearer good', '10.0.0.1')).username).toBe('alice');
  for (let i = 0; i < 3; i++) await expect(auth.authenticate(`Bearer garbage-${i}`, '10.0.0.1')).rejects.toMatchObject({ code: Code.Unauthenticated });
  // The address's budget is spent: new tokens from it are refused without a review.
  await expect(auth.authenticate('Bearer garbage-3', '10.0.0.1')).rejects.toMatchObject({ code: Code.ResourceExhausted });
  expect(fake.bodies.map((b) => b.spec.token)).toEqual(['good', 'garbage-0', 'garbage-1', 'garbage-2']);
  // The accepted token's cached answer expires: it is reviewed again, not refused with the address.
  now += 1_000;
  expect((await auth.authenticate('Bearer good', '10.0.0.1')).username).toBe('alice');
  expect(fake.bodies.map((b) => b.spec.token)).toEqual(['good', 'garbage-0', 'garbage-1', 'garbage-2', 'good']);
  await expect(auth.authenticate('Bearer garbage-4', '10.0.0.1')).rejects.toMatchObject({ code: Code.ResourceExhausted });
});

test('a token refused after it was accepted (revoked, expired) loses its exemption from the address budget', async () => {
  let now = 0;
  let valid = true;
  const fake = new FakeTransport((b) => ({ status: b.spec.token === 'good' && valid ? { authenticated: true, audiences: ['rayshift'], user: alice } : { authenticated: false } }));
  const auth = new TokenAuthenticator(new KubeClient(fake), { cacheTtlMs: 1_000, failures: { burst: 1, perSecond: 0.001 }, now: () => now });
  await auth.authenticate('Bearer good', '10.0.0.1');
  valid = false;
  now += 1_000;
  // Refused: it spends the address's one refusal, and the next review of it waits for the budget.
  await expect(auth.authenticate('Bearer good', '10.0.0.1')).rejects.toMatchObject({ code: Code.Unauthenticated });
  now += 1_000;
  await expect(auth.authenticate('Bearer good', '10.0.0.1')).rejects.toMatchObject({ code: Code.ResourceExhausted });
  expect(fake.bodies).toHaveLength(2);
});
