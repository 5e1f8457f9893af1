/**
 * Connection hygiene of the API server, over h2c in local mode (the same listener code bounds TLS
 * sessions; test/integration/apiserver-connections.test.ts runs 1,000 TLS sessions on the real
 * cluster): a session with no stream is closed after the idle timeout, an old one is sent GOAWAY, a
 * session beyond `maxSessions` is closed on arrival, the stream cap is announced in SETTINGS, and
 * limits out of range are refused naming the option, the range and the value. Every wait is for an
 * event of the session.
 */
import * as http2 from 'node:http2';
import * as net from 'node:net';
import { startApiServer, type ApiServerOptions, type RunningApiServer } from '../../lib/apiserver/server';
import { neverCalledKubeConfig } from './support/never-called-kubeconfig';

const servers: RunningApiServer[] = [];
const sessions: http2.ClientHttp2Session[] = [];

afterEach(async () => {
  for (const s of sessions.splice(0)) s.destroy();
  for (const s of servers.splice(0)) await s.close();
});

async function start(limits: Omit<ApiServerOptions, 'kubeConfig'>): Promise<RunningApiServer> {
  const server = await startApiServer({ kubeConfig: neverCalledKubeConfig(), insecureLocal: true, port: 0, ...limits });
  servers.push(server);
  return server;
}

function connect(server: RunningApiServer): http2.ClientHttp2Session {
  const s = http2.connect(server.url);
  s.on('error', () => undefined);
  sessions.push(s);
  return s;
}

const event = (s: http2.ClientHttp2Session, name: string) => new Promise<unknown>((r) => s.once(name, r));

test('a session without a stream is closed after the idle timeout, one with a finished stream too', async () => {
  const server = await start({ idleTimeoutSeconds: 1 });
  const silent = connect(server);
  const used = connect(server);
  await Promise.all([event(silent, 'connect'), event(used, 'connect')]);
  const answer = await new Promise<number>((resolve) => {
    const req = used.request({ ':path': '/healthz' });
    req.on('response', (h) => resolve(Number(h[':status'])));
    req.resume();
  });
  expect(answer).toBe(200);
  // Without the timeout neither ever closes (the test then times out).
  await Promise.all([event(silent, 'close'), event(used, 'close')]);
  expect([silent.destroyed, used.destroyed]).toEqual([true, true]);
});

test('an HTTP/1.1 connection without a request in flight is closed after its idle timeout, one with a request in flight is not', async () => {
  const server = await start({ http1IdleTimeoutSeconds: 1, idleTimeoutSeconds: 3600 });
  const open = (): Promise<net.Socket> =>
    new Promise((resolve) => {
      const s = net.connect(server.port, '127.0.0.1', () => resolve(s));
      s.on('error', () => undefined);
    });
  const closed = (s: net.Socket) => new Promise<void>((r) => (s.destroyed ? r() : s.once('close', () => r())));
  // A request whose body has not all arrived stays in flight until the rest is sent.
  const busy = await open();
  const body = '{"namespace":"a","name":"b"}';
  const answer = new Promise<string>((resolve) => {
    let text = '';
    busy.on('data', (c: Buffer) => {
      text += c.toString('utf8');
      if (text.includes('\r\n\r\n')) resolve(text);
    });
  });
  busy.write(`POST /rayshift.v1.RayServiceService/GetRayService HTTP/1.1\r\nhost: 127.0.0.1:${server.port}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body.slice(0, 5)}`);
  // Opened after the busy one: once its idle timeout closed it, the busy one's would have too.
  const silent = await open();
  // Without the limit a silent connection stays until Node's headers timeout (a minute and more; the test times out).
  await closed(silent);
  expect(busy.destroyed).toBe(false);
  busy.write(body.slice(5));
  expect(await answer).toMatch(/^HTTP\/1\.1 \d{3} /);
  // Answered, it is idle again: closed after the timeout.
  await closed(busy);
});

test('a session older than the session timeout is told to go away', async () => {
  const server = await start({ sessionTimeoutSeconds: 1, idleTimeoutSeconds: 3600 });
  const s = connect(server);
  await event(s, 'connect');
  expect(await event(s, 'goaway')).toBe(http2.constants.NGHTTP2_NO_ERROR);
});

test('connections beyond maxSessions are closed on arrival; the stream cap is announced', async () => {
  const server = await start({ maxSessions: 2, maxStreamsPerSession: 7 });
  const first = connect(server);
  const second = connect(server);
  await Promise.all([event(first, 'remoteSettings'), event(second, 'remoteSettings')]);
  expect(first.remoteSettings.maxConcurrentStreams).toBe(7);
  const third = connect(server);
  let settings = false;
  third.once('remoteSettings', () => (settings = true));
  await event(third, 'close');
  expect(settings).toBe(false);
  expect(first.closed).toBe(false);
});

test('a limit out of its range is refused, naming the option, its flag, the range and the value', async () => {
  await expect(start({ maxSessions: 0 })).rejects.toThrow('maxSessions (--max-sessions) must be from 1 to 100000; got 0');
  await expect(start({ idleTimeoutSeconds: 0.5 })).rejects.toThrow('idleTimeoutSeconds (--idle-timeout-seconds) must be from 1 to 3600; got 0.5');
  await expect(start({ http1IdleTimeoutSeconds: 0 })).rejects.toThrow('http1IdleTimeoutSeconds (--http1-idle-timeout-seconds) must be from 1 to 3600; got 0');
});
