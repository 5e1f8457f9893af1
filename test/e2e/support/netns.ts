/**
 * Test hosts in network namespaces (`ip netns` + a veth pair), one per real Ray cluster, so every
 * cluster keeps Ray's default ports and EndpointSlices carry ordinary IPv4 addresses, as with
 * pods. Each host gets `10.213.<index>.2/24` inside and `10.213.<index>.1/24` on the root side,
 * and routes `10.213.0.0/16` back through its link: as on a pod network, a host answers any root-side
 * address that reaches it, including one of another host's link (a peer still holding a keep-alive
 * connection to a Pod IP that has moved to this host then gets a reset, not silence). Nothing else
 * is routed, so the only addresses dialled are those the test made itself.
 * Needs root (CAP_NET_ADMIN); `netnsAvailable()` tells whether this machine allows it.
 */
import { execFileSync, spawnSync } from 'node:child_process';

/** A network namespace with a veth link to the root namespace. */
export interface NetnsHost {
  /** Namespace name (`ip netns exec <name> …`). */
  readonly name: string;
  /** Address of the host inside the namespace (what Ray binds and EndpointSlices carry). */
  readonly address: string;
  /** Address of the root namespace's end of the link. */
  readonly gateway: string;
  /** Processes still running inside the namespace. */
  pids(): number[];
  /** SIGKILLs whatever still runs inside, then deletes the namespace (and with it the link). Idempotent. */
  remove(): void;
}

const PREFIX = 'rs-e2e-';

/** Names of the namespace of head `label` and of its veth ends (root side, namespace side). */
export function netnsNames(label: string): { readonly namespace: string; readonly rootLink: string; readonly innerLink: string } {
  return { namespace: `${PREFIX}${label}`, rootLink: `rse-${label}`, innerLink: `rse-${label}-i` };
}

function ip(args: string[]): void {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

/** True when this process can create network namespaces (root and a working `ip netns`). */
export function netnsAvailable(): boolean {
  if (process.getuid?.() !== 0) return false;
  const probe = `${PREFIX}probe-${process.pid}`;
  const made = spawnSync('ip', ['netns', 'add', probe], { stdio: 'ignore' }).status === 0;
  if (!made) return false;
  const usable = spawnSync('ip', ['netns', 'exec', probe, 'ip', 'link', 'set', 'lo', 'up'], { stdio: 'ignore' }).status === 0;
  spawnSync('ip', ['netns', 'del', probe], { stdio: 'ignore' });
  return usable;
}

function pidsIn(name: string): number[] {
  const out = spawnSync('ip', ['netns', 'pids', name], { encoding: 'utf8' });
  if (out.status !== 0) return [];
  return out.stdout.split(/\s+/).filter(Boolean).map(Number).filter((n) => Number.isInteger(n) && n > 0);
}

function removeNamespace(name: string): void {
  for (const pid of pidsIn(name)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  spawnSync('ip', ['netns', 'del', name], { stdio: 'ignore' });
}

/**
 * Creates the namespace `rs-e2e-<label>` with the link `10.213.<index>.1 <-> 10.213.<index>.2`
 * (`index` 1–250). A namespace of that name left over by an earlier run is removed first (only
 * this suite's `rs-e2e-` names are touched).
 */
export function createNetnsHost(label: string, index: number): NetnsHost {
  if (!/^[a-z0-9]{1,6}$/.test(label)) throw new RangeError(`netns label must be 1-6 lowercase letters or digits; got ${JSON.stringify(label)}`);
  if (!Number.isInteger(index) || index < 1 || index > 250) throw new RangeError(`netns index must be 1-250; got ${index}`);
  const { namespace: name, rootLink: outside, innerLink: inside } = netnsNames(label);
  removeNamespace(name);
  spawnSync('ip', ['link', 'del', outside], { stdio: 'ignore' });
  const address = `10.213.${index}.2`;
  const gateway = `10.213.${index}.1`;
  ip(['netns', 'add', name]);
  try {
    ip(['link', 'add', outside, 'type', 'veth', 'peer', 'name', inside]);
    ip(['link', 'set', inside, 'netns', name]);
    ip(['addr', 'add', `${gateway}/24`, 'dev', outside]);
    ip(['-n', name, 'addr', 'add', `${address}/24`, 'dev', inside]);
    ip(['link', 'set', outside, 'up']);
    ip(['-n', name, 'link', 'set', inside, 'up']);
    ip(['-n', name, 'link', 'set', 'lo', 'up']);
    ip(['-n', name, 'route', 'add', '10.213.0.0/16', 'via', gateway]);
  } catch (err) {
    removeNamespace(name);
    throw new Error(`setting up network namespace ${name}: ${String((err as { stderr?: Buffer }).stderr ?? err).trim()}`);
  }
  let removed = false;
  return {
    name,
    address,
    gateway,
    pids: () => pidsIn(name),
    remove() {
      if (removed) return;
      removed = true;
      removeNamespace(name);
    },
  };
}
