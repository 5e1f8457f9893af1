/** The CLI's API-server options: which combinations are usage errors, where the token comes from, what errors say. */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Code, ConnectError } from '@connectrpc/connect';
import { describeApiError } from '../../lib/cli/api-connection';
import { apiConnectionProblem, plaintextTokenNotice, resolveToken } from '../../lib/cli/api-options';
import { isLoopbackHost } from '../../lib/runtime/net/loopback';

test('API-server options need --api-server, and exclude --kubeconfig and each other where they compete', () => {
  expect(apiConnectionProblem({})).toBeUndefined();
  expect(apiConnectionProblem({ kubeconfig: 'kc' })).toBeUndefined();
  expect(apiConnectionProblem({ apiServer: 'https://api:8443', token: 't', caFile: 'ca.crt' })).toBeUndefined();
  expect(apiConnectionProblem({ token: 't' })).toBe('--token needs --api-server');
  expect(apiConnectionProblem({ caFile: 'ca', insecureSkipTlsVerify: true })).toBe('--ca-file, --insecure-skip-tls-verify need --api-server');
  expect(apiConnectionProblem({ apiServer: 'https://api:8443', kubeconfig: 'kc' })).toBe('--kubeconfig and --api-server exclude each other');
  expect(apiConnectionProblem({ apiServer: 'https://api:8443', token: 't', tokenFile: 'f' })).toBe('--token and --token-file exclude each other');
  expect(apiConnectionProblem({ apiServer: 'api:8443' })).toBe('--api-server must be an http(s) URL; got "api:8443"');
});

test('the token comes from --token, else --token-file (trimmed), else $RAYSHIFT_TOKEN', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rayshift-token-'));
  try {
    const file = path.join(dir, 'token');
    fs.writeFileSync(file, 'from-file\n');
    const env = { RAYSHIFT_TOKEN: 'from-env' };
    expect(resolveToken({ token: 'from-flag', tokenFile: file }, env)).toBe('from-flag');
    expect(resolveToken({ tokenFile: file }, env)).toBe('from-file');
    expect(resolveToken({}, env)).toBe('from-env');
    expect(resolveToken({}, {})).toBeUndefined();
    expect(() => resolveToken({ tokenFile: path.join(dir, 'missing') }, env)).toThrow(`cannot read --token-file ${path.join(dir, 'missing')}: ENOENT`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('errors say what they mean for the verb and the object', () => {
  const attempt = { verb: 'pause', namespace: 'serving', name: 'llm' };
  const server = { url: 'https://api:8443', tokenGiven: true };
  const say = (code: Code, message = 'server says', tokenGiven = true) => describeApiError(new ConnectError(message, code), attempt, { ...server, tokenGiven });
  expect(say(Code.Unauthenticated)).toBe('not authenticated by the API server https://api:8443: the token was rejected (expired, or not issued for audience "rayshift"?)');
  expect(say(Code.Unauthenticated, '', false)).toBe('not authenticated by the API server https://api:8443: no token given (use --token, --token-file or $RAYSHIFT_TOKEN)');
  expect(say(Code.PermissionDenied)).toBe('permission denied: you may not pause RayService serving/llm');
  expect(say(Code.FailedPrecondition, 'the upgrade is already paused')).toBe('cannot pause RayService serving/llm: the upgrade is already paused');
  expect(say(Code.Unavailable, 'connect ECONNREFUSED')).toBe('the API server https://api:8443 is unavailable: connect ECONNREFUSED');
  expect(say(Code.Internal, 'self-signed certificate in certificate chain')).toBe('the certificate of the API server https://api:8443 is not trusted: self-signed certificate in certificate chain (give its CA with --ca-file)');
  expect(say(Code.ResourceExhausted, 'too many requests; retry later')).toBe('the call to the API server https://api:8443 failed: RESOURCE_EXHAUSTED: too many requests; retry later');
});

test('a token over plain HTTP beyond loopback is refused (naming its source), warned about with --allow-plaintext-token, and quiet otherwise', () => {
  const remote = 'http://api.example:8080';
  expect(plaintextTokenNotice({ apiServer: remote, tokenFile: '/run/token' }).refusal).toMatch(/^refusing to send the bearer token \(from --token-file \/run\/token\) over plain HTTP to http:\/\/api\.example:8080/);
  expect(plaintextTokenNotice({ apiServer: remote }).refusal).toMatch(/\(from \$RAYSHIFT_TOKEN\)/);
  expect(plaintextTokenNotice({ apiServer: remote, token: 't', allowPlaintextToken: true })).toEqual({ warning: expect.stringMatching(/^sending the bearer token \(from --token\) over plain HTTP/) });
  for (const quiet of ['https://api.example:8443', 'http://127.0.0.1:8080', 'http://127.1.2.3:8080', 'http://localhost:8080', 'http://[::1]:8080']) expect(plaintextTokenNotice({ apiServer: quiet, token: 't' })).toEqual({});
  expect(isLoopbackHost('::1')).toBe(true);
  expect(isLoopbackHost('128.0.0.1')).toBe(false);
  expect(isLoopbackHost('localhost.example')).toBe(false);
});

test('certificate errors: an expired certificate needs no CA advice; another refusal with --ca-file names the file', () => {
  const attempt = { verb: 'read', namespace: 'serving', name: 'llm' };
  const withCause = (message: string, code: string) => new ConnectError(message, Code.Internal, undefined, undefined, Object.assign(new Error(message), { code }));
  const server = { url: 'https://api:8443', tokenGiven: true };
  expect(describeApiError(withCause('Error: certificate has expired', 'CERT_HAS_EXPIRED'), attempt, { ...server, caFile: 'ca.crt' })).toBe('the certificate of the API server https://api:8443 is not valid now: certificate has expired');
  expect(describeApiError(withCause('unsupported certificate purpose', 'INVALID_PURPOSE'), attempt, { ...server, caFile: 'ca.crt' })).toBe(
    'the certificate of the API server https://api:8443 was refused with the CA in --ca-file ca.crt: unsupported certificate purpose',
  );
  expect(describeApiError(withCause('Error: self-signed certificate', 'DEPTH_ZERO_SELF_SIGNED_CERT'), attempt, server)).toBe(
    'the certificate of the API server https://api:8443 is not trusted: self-signed certificate (give its CA with --ca-file)',
  );
});
