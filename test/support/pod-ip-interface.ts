/**
 * TEST-ONLY: a host interface that carries kwok Pod IPs, so that a process listening on 0.0.0.0 (or
 * on a Pod's IP) answers at that Pod's IP from this host. kwok runs no process and gives each Pod an
 * IP from its Node's podCIDR; an address added here is local, so a dial to it reaches this host.
 * A veth pair, not a dummy link: this kernel has no dummy driver. Needs root (`ip`).
 *
 * Pick a Pod network no other test on the machine routes (`startTestCluster({ podNetwork })`): an
 * address on this interface would shadow another test's route to the same IP.
 *
 * Given that network (`unreachable`), an address of it that no Pod holds (a Pod gone, its IP taken
 * off) answers "No route to host" at once, as a Node's Pod network with no such Pod does, instead of
 * leaving this host by its default route, where a dial hangs until TCP gives up (a router that dialed
 * a just-deleted Pod before its watch saw the deletion waited 30 s).
 */
import { execFileSync } from 'node:child_process';

/** The interface; `close()` deletes it (and every address on it). */
export interface PodIpInterface {
  readonly device: string;
  /** Puts `ip` (a /32) on the interface. */
  add(ip: string): void;
  /** Takes `ip` off the interface (nothing when it is not there). */
  remove(ip: string): void;
  close(): void;
}

function ip(...args: string[]): void {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

/**
 * Creates the veth pair `device` / `<device>-p`, up, replacing one a killed run left behind; with
 * `unreachable` (a CIDR, e.g. `10.247.0.0/16`), also an unreachable route for it until `close()`.
 */
export function createPodIpInterface(device: string, unreachable?: string): PodIpInterface {
  try {
    ip('link', 'del', device);
  } catch {
    // none left behind
  }
  ip('link', 'add', device, 'type', 'veth', 'peer', 'name', `${device}-p`);
  ip('link', 'set', device, 'up');
  ip('link', 'set', `${device}-p`, 'up');
  // `replace`: a killed run may have left it; the local /32s above take precedence over it.
  if (unreachable !== undefined) ip('route', 'replace', 'unreachable', unreachable);
  return {
    device,
    add: (addr) => ip('addr', 'add', `${addr}/32`, 'dev', device),
    remove: (addr) => {
      try {
        ip('addr', 'del', `${addr}/32`, 'dev', device);
      } catch {
        // already gone
      }
    },
    close: () => {
      try {
        // Deleting one end removes both.
        ip('link', 'del', device);
      } catch {
        // gone
      }
      try {
        if (unreachable !== undefined) ip('route', 'del', 'unreachable', unreachable);
      } catch {
        // gone
      }
    },
  };
}
