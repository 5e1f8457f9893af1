/** Error mapping: Kubernetes answers to google.rpc codes, codes to HTTP, and no internal text in messages. */
import { Code, ConnectError } from '@connectrpc/connect';
import { HTTP_STATUS_OF_CODE, invalidArgument, publicError, toConnectError } from '../../lib/apiserver/errors';
import { statusJson } from '../../lib/apiserver/rest/status-json';
import { KubeApiError, KubeConnectionError, UnknownKindError } from '../../lib/runtime/kube/errors';

const subject = { kind: 'RayService', namespace: 'ns', name: 'svc' };
const kube = (statusCode: number, reason?: string, causes?: { field: string; message: string }[]) =>
  new KubeApiError({ statusCode, reason, message: `internal detail from ${statusCode} at https://10.0.0.1:6443`, details: causes ? { causes } : undefined, method: 'POST', path: '/apis/rayshift.dev/v1alpha1/namespaces/ns/rayservices' });

test.each([
  [404, 'NotFound', Code.NotFound, 404],
  [409, 'AlreadyExists', Code.AlreadyExists, 409],
  [409, 'Conflict', Code.Aborted, 409],
  [410, 'Expired', Code.FailedPrecondition, 400],
  [422, 'Invalid', Code.InvalidArgument, 400],
  [403, 'Forbidden', Code.PermissionDenied, 403],
  [401, 'Unauthorized', Code.Unauthenticated, 401],
  [429, 'TooManyRequests', Code.ResourceExhausted, 429],
  [504, 'Timeout', Code.DeadlineExceeded, 504],
  [500, 'InternalError', Code.Unavailable, 503],
])('Kubernetes %i %s becomes %s (HTTP %i) without the server text', (status, reason, code, http) => {
  const err = toConnectError(kube(status, reason), subject);
  expect(err.code).toBe(code);
  expect(HTTP_STATUS_OF_CODE[err.code]).toBe(http);
  expect(err.rawMessage).not.toMatch(/internal detail|10\.0\.0\.1|\/apis\//);
});

test('Invalid carries the causes as BadRequest field violations', () => {
  const err = toConnectError(kube(422, 'Invalid', [{ field: 'spec.x', message: 'must be positive' }]), subject);
  expect(statusJson(err)).toEqual({
    httpStatus: 400,
    body: { code: Code.InvalidArgument, message: 'RayService svc in namespace ns is invalid', details: [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field: 'spec.x', description: 'must be positive' }] }] },
  });
});

test('a cause about the whole object (Kubernetes prints its field as <nil>) names no field; repeated causes appear once', () => {
  const err = toConnectError(
    kube(422, 'Invalid', [
      { field: '<nil>', message: 'Invalid value: "object": rule failed' },
      { field: 'metadata.labels', message: 'Invalid value: "bad key!"' },
      { field: 'metadata.labels', message: 'Invalid value: "bad key!"' },
    ]),
    subject,
  );
  expect((statusJson(err).body.details[0] as { fieldViolations: unknown[] }).fieldViolations).toEqual([{ description: 'Invalid value: "object": rule failed' }, { field: 'metadata.labels', description: 'Invalid value: "bad key!"' }]);
  expect(JSON.stringify(statusJson(err))).not.toContain('<nil>');
});

test('network failures are UNAVAILABLE, unknown kinds FAILED_PRECONDITION, anything else INTERNAL with a fixed message', () => {
  expect(toConnectError(new KubeConnectionError('GET', '/x', Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:6443'), { code: 'ECONNREFUSED' })), subject).code).toBe(Code.Unavailable);
  expect(toConnectError(new UnknownKindError('rayshift.dev/v1alpha1', 'RayService'), subject).code).toBe(Code.FailedPrecondition);
  const seen: unknown[] = [];
  const hidden = publicError(new TypeError('cannot read properties of undefined (reading "spec") at /srv/app.js:1'), (e) => seen.push(e));
  expect(hidden.code).toBe(Code.Internal);
  expect(hidden.rawMessage).toBe('internal error');
  expect(seen).toHaveLength(1);
  const passed = new ConnectError('nope', Code.NotFound);
  expect(publicError(passed, () => undefined)).toBe(passed);
});

test('an error that is no Kubernetes answer (objectPath without a name) is INTERNAL to the caller and still reaches the log', () => {
  const bug = new Error('RayService: a name is required');
  const err = toConnectError(bug, subject);
  expect({ code: err.code, message: err.rawMessage }).toEqual({ code: Code.Internal, message: 'internal error' });
  const seen: unknown[] = [];
  expect(publicError(err, (e) => seen.push(e))).toBe(err);
  expect(seen).toEqual([bug]);
});

test('a message quoting an unpaired surrogate is made well-formed, keeping the code and the details', () => {
  const err = invalidArgument('name: "\ud800x" is invalid', [{ field: 'name', description: 'x' }]);
  const shown = publicError(err, () => undefined);
  expect({ message: shown.rawMessage, code: shown.code, details: shown.details }).toEqual({ message: 'name: "\ufffdx" is invalid', code: Code.InvalidArgument, details: err.details });
  expect(() => encodeURIComponent(shown.rawMessage)).not.toThrow();
});

test('every code has an HTTP status and invalidArgument lists every violation', () => {
  for (const code of Object.values(Code).filter((c): c is Code => typeof c === 'number')) expect(HTTP_STATUS_OF_CODE[code]).toBeGreaterThanOrEqual(400);
  const err = invalidArgument('2 problems', [
    { field: 'a', description: 'x' },
    { field: 'b', description: 'y' },
  ]);
  expect((statusJson(err).body.details[0] as { fieldViolations: unknown[] }).fieldViolations).toHaveLength(2);
});
