/**
 * The tests' REST agent drops an idle connection before the API server's TLS listener closes it:
 * the listener's HTTP/1.1 answers carry Node's `Keep-Alive: timeout=<s>`, and the agent's free socket
 * then times out a second before. A plain keep-alive agent ignores the hint (its free socket has no
 * timeout) and can reuse a socket the server closes that instant (`read ECONNRESET`). Read from the
 * agent's socket once the answer is in: nothing waits on the clock.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as os from 'node:os';
import * as path from 'node:path';
import { listenTls, type Listener } from '../../lib/apiserver/listen';
import { keepAliveAgent } from './support/keep-alive-agent';

let dir: string;
let cert: Buffer;
let key: Buffer;
let listener: Listener;
const agents: https.Agent[] = [];

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rayshift-keepalive-'));
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'key.pem', '-out', 'cert.pem', '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1'], { cwd: dir, stdio: 'pipe' });
  cert = fs.readFileSync(path.join(dir, 'cert.pem'));
  key = fs.readFileSync(path.join(dir, 'key.pem'));
  listener = await listenTls((_req, res) => res.end('ok'), { cert, key }, '127.0.0.1', 0, { idleTimeoutMs: 60_000, http1IdleTimeoutMs: 60_000, sessionTimeoutMs: 600_000, maxSessions: 10, maxStreamsPerSession: 10 });
});
afterAll(async () => {
  for (const a of agents) a.destroy();
  await listener.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** One GET through `agent`: the answer's `keep-alive` header and, once the agent holds the socket free, that socket's idle timeout. */
async function idleTimeoutAfterOneCall(agent: https.Agent): Promise<{ hint: unknown; freeSocketTimeout: number | undefined }> {
  agents.push(agent);
  const hint = await new Promise<unknown>((resolve, reject) => {
    const req = https.request(`https://127.0.0.1:${listener.port}/`, { agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.headers['keep-alive']));
    });
    req.on('error', reject);
    req.end();
  });
  const free = () => Object.values(agent.freeSockets).flat();
  if (free().length === 0) await new Promise<void>((resolve) => agent.once('free', () => setImmediate(resolve)));
  expect(free()).toHaveLength(1);
  return { hint, freeSocketTimeout: free()[0]?.timeout };
}

test('the tests\' agent takes the server\'s keep-alive hint: its idle socket times out a second before the server closes it', async () => {
  expect(await idleTimeoutAfterOneCall(keepAliveAgent(cert))).toEqual({ hint: 'timeout=5', freeSocketTimeout: 4_000 });
});

test('a plain keep-alive agent ignores the hint: its idle socket has no timeout', async () => {
  expect(await idleTimeoutAfterOneCall(new https.Agent({ keepAlive: true, ca: cert }))).toEqual({ hint: 'timeout=5', freeSocketTimeout: 0 });
});
