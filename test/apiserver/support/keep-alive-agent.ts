/**
 * The keep-alive agent of the tests' REST calls. Node's HTTP/1.1 server closes an idle connection
 * once its keep-alive timeout (5 s, plus a second's grace on Node 24) has passed and says so in
 * `Keep-Alive: timeout=5`; Node's agent takes that hint only when it has an idle timeout of its
 * own. Without one it kept the socket until it saw it closed, so a request sent as the server
 * closed it failed with `read ECONNRESET` (the dashboard suite's upgrade poll, on a loaded machine).
 * With one, it drops the socket a second before the hinted time.
 */
import * as https from 'node:https';

/** Longer than any server hint, so the hint decides when an idle socket is dropped. */
const AGENT_IDLE_TIMEOUT_MS = 3_600_000;

/** A keep-alive HTTPS agent trusting `ca` that honours the server's `Keep-Alive: timeout` hint. */
export function keepAliveAgent(ca: string | Buffer): https.Agent {
  return new https.Agent({ keepAlive: true, ca, timeout: AGENT_IDLE_TIMEOUT_MS });
}
