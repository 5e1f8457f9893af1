/**
 * Whether a host name or address stays on this machine: the one rule behind every "loopback only"
 * decision (the CLI's plaintext-token refusal, the dashboard's and the API server's local binds).
 */
import * as net from 'node:net';

/** True for `localhost` and loopback addresses (`127.0.0.0/8`, `::1`; bracketed or not). */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  return h === 'localhost' || h === '::1' || (net.isIPv4(h) && h.startsWith('127.'));
}
