/**
 * The CLI against real local API-server endpoints: TLS errors say what is wrong (an unknown signer,
 * the wrong `--ca-file`, another host name) and suggest `--ca-file` only when none was given; a
 * bearer token is not sent over plain HTTP beyond this machine without `--allow-plaintext-token`.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { rayshiftIn } from './cli-io';

let dir: string;
const servers: http2.Http2Server[] = [];
/** The `authorization` header of every request the servers received. */
const seen: string[] = [];

function openssl(args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** A CA `name` (name.crt/name.key). */
function makeCa(name: string): void {
  openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.crt`, '-days', '2', '-subj', `/CN=${name}`,
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
}

/** A serving certificate `name` signed by the CA `ca`, for `san` (e.g. `IP:127.0.0.1`). */
function makeServing(name: string, ca: string, san: string): void {
  openssl(['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`]);
  fs.writeFileSync(path.join(dir, `${name}.ext`), `basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\nsubjectAltName=${san}\n`);
  openssl(['x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.crt`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-out', `${name}.crt`, '-days', '2', '-extfile', `${name}.ext`]);
}

/** Answers every gRPC call UNAUTHENTICATED (trailers-only), after recording its token. */
function answer(req: http2.Http2ServerRequest, res: http2.Http2ServerResponse): void {
  seen.push(String(req.headers.authorization ?? ''));
  res.writeHead(200, { 'content-type': 'application/grpc', 'grpc-status': '16', 'grpc-message': 'token rejected' });
  res.end();
}

async function listen(server: http2.Http2Server): Promise<number> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return (server.address() as AddressInfo).port;
}

let trusted: string;
let misnamed: string;
let cleartext: string;
const file = (name: string) => path.join(dir, name);

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rayshift-cli-tls-'));
  makeCa('ca');
  makeCa('other-ca');
  makeServing('server', 'ca', 'IP:127.0.0.1,DNS:localhost');
  makeServing('elsewhere', 'ca', 'DNS:elsewhere.example');
  const tls = (name: string) => ({ cert: fs.readFileSync(file(`${name}.crt`)), key: fs.readFileSync(file(`${name}.key`)) });
  trusted = `https://127.0.0.1:${await listen(http2.createSecureServer(tls('server'), answer))}`;
  misnamed = `https://127.0.0.1:${await listen(http2.createSecureServer(tls('elsewhere'), answer))}`;
  cleartext = `http://127.0.0.1:${await listen(http2.createServer(answer))}`;
});

afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
  fs.rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => {
  seen.length = 0;
});

const status = (url: string, ...extra: string[]) => rayshiftIn(['status', 'llm', '-n', 'team-a', '--api-server', url, '--token', 'secret-token', ...extra]);

test('an unknown signer without --ca-file: not trusted, give its CA with --ca-file', async () => {
  const r = await status(trusted);
  expect(r.code).toBe(1);
  expect(r.stderr).toContain(`error: the certificate of the API server ${trusted} is not trusted: unable to verify the first certificate`);
  expect(r.stderr).toContain('(give its CA with --ca-file)');
  expect(seen).toEqual([]);
});

test('a --ca-file that did not sign the certificate is named, and --ca-file is not suggested again', async () => {
  const r = await status(trusted, '--ca-file', file('other-ca.crt'));
  expect(r.code).toBe(1);
  expect(r.stderr).toBe(
    `error: the CA in --ca-file ${file('other-ca.crt')} did not verify the certificate of the API server ${trusted}: unable to verify the first certificate ` +
      "(is it the CA that signed the server's certificate, and does the server send its intermediate certificates?)\n",
  );
  expect(seen).toEqual([]);
});

test('a certificate for another host name says so, whatever the CA', async () => {
  const r = await status(misnamed, '--ca-file', file('ca.crt'));
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(new RegExp(`^error: the certificate of the API server ${misnamed.replace(/\./g, '\\.')} is not issued for its host 127\\.0\\.0\\.1: Hostname/IP does not match certificate's altnames`));
  expect(r.stderr).toContain('(give --api-server a host name the certificate holds)');
  expect(r.stderr).not.toContain('--ca-file');
});

test('with the right --ca-file the token reaches the server', async () => {
  const r = await status(trusted, '--ca-file', file('ca.crt'));
  expect(r.stderr).toBe(`error: not authenticated by the API server ${trusted}: the token was rejected (expired, or not issued for audience "rayshift"?)\n`);
  expect(seen).toEqual(['Bearer secret-token']);
});

test('an unreadable --ca-file is named', async () => {
  const r = await status(trusted, '--ca-file', file('missing.crt'));
  expect(r.code).toBe(1);
  expect(r.stderr).toBe(`error: cannot read --ca-file ${file('missing.crt')}: ENOENT\n`);
});

test('a token is refused over plain HTTP beyond this machine, before any connection', async () => {
  const r = await rayshiftIn(['pause', 'llm', '--api-server', 'http://rayshift-api.invalid:8080', '--token', 'secret-token']);
  expect(r.code).toBe(2);
  expect(r.stderr).toBe(
    'error: refusing to send the bearer token (from --token) over plain HTTP to http://rayshift-api.invalid:8080, where anyone on the network path can read and reuse it: ' +
      'use an https:// URL (with --ca-file for its CA), or --allow-plaintext-token if the path is encrypted otherwise\n',
  );
});

test('--allow-plaintext-token sends it with a warning', async () => {
  const r = await rayshiftIn(['pause', 'llm', '--api-server', 'http://rayshift-api.invalid:8080', '--token', 'secret-token', '--allow-plaintext-token']);
  // The name does not resolve: ENOTFOUND from a resolver, EAI_AGAIN on a machine with no network.
  expect(r.stderr).toMatch(/^warning: sending the bearer token \(from --token\) over plain HTTP to http:\/\/rayshift-api\.invalid:8080, where anyone on the network path can read and reuse it\nerror: .*(ENOTFOUND|EAI_AGAIN) rayshift-api\.invalid\n$/);
  expect(r.code).toBe(1);
});

test('plain HTTP on loopback carries the token without a word', async () => {
  const r = await status(cleartext);
  expect(r.stderr).toBe(`error: not authenticated by the API server ${cleartext}: the token was rejected (expired, or not issued for audience "rayshift"?)\n`);
  expect(seen).toEqual(['Bearer secret-token']);
});

test('--allow-plaintext-token needs --api-server', async () => {
  const r = await rayshiftIn(['pause', 'llm', '--allow-plaintext-token']);
  expect(r.code).toBe(2);
  expect(r.stderr).toBe('error: --allow-plaintext-token needs --api-server\n');
});
