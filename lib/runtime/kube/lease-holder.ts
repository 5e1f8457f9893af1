/**
 * Writing the holder of a `coordination.k8s.io/v1` Lease, as client-go's resource lock does: one
 * home for the leader election's Lease and a sharded operator's member and shard Leases. Every write
 * is a create or a resourceVersion-guarded replace, so of two writers racing for a Lease one gets a
 * 409 and loses.
 */
import type { LeaseView } from '../../engine/shards';
import { KubeClient } from './client';
import { isStatus } from './errors';
import { KnownTypes, KubeObject } from './types';

const LEASE = KnownTypes.Lease;

/** A Lease's spec, as far as the holder's writes read it. */
interface LeaseSpec {
  holderIdentity?: string;
  renewTime?: string;
  acquireTime?: string;
  leaseDurationSeconds?: number;
  leaseTransitions?: number;
}

/** Who takes a Lease, and for how long. */
export interface LeaseClaim {
  readonly namespace: string;
  readonly name: string;
  readonly identity: string;
  readonly durationSeconds: number;
  /** Labels of a Lease this claim creates. @default none */
  readonly labels?: Record<string, string>;
}

/**
 * Takes or renews `lease` (as last read; undefined: creates it) for `claim.identity` at `now`:
 * a renewal moves `renewTime`, a take also `acquireTime` and `leaseTransitions`. False when another
 * writer won (409: a Conflict on the replace, AlreadyExists on the create).
 */
export async function holdLease(client: KubeClient, lease: KubeObject | undefined, claim: LeaseClaim, now: number): Promise<boolean> {
  const micro = microTime(now);
  try {
    if (!lease) {
      await client.create({
        apiVersion: LEASE.apiVersion,
        kind: LEASE.kind,
        metadata: { name: claim.name, namespace: claim.namespace, ...(claim.labels ? { labels: claim.labels } : {}) },
        spec: { holderIdentity: claim.identity, leaseDurationSeconds: claim.durationSeconds, acquireTime: micro, renewTime: micro, leaseTransitions: 0 },
      });
      return true;
    }
    const spec = specOf(lease);
    const mine = spec.holderIdentity === claim.identity;
    await replaceSpec(client, lease, {
      holderIdentity: claim.identity,
      leaseDurationSeconds: claim.durationSeconds,
      renewTime: micro,
      ...(mine ? {} : { acquireTime: micro, leaseTransitions: (spec.leaseTransitions ?? 0) + 1 }),
    });
    return true;
  } catch (err) {
    if (isStatus(err, 409)) return false;
    throw err;
  }
}

/** Releases `lease` (holder cleared, expiring in a second) so a successor need not wait; a Lease written meanwhile is refused (409). */
export async function releaseLease(client: KubeClient, lease: KubeObject): Promise<void> {
  await replaceSpec(client, lease, { holderIdentity: '', leaseDurationSeconds: 1 });
}

/** The holder of `lease`, if any. */
export function leaseHolder(lease: KubeObject): string | undefined {
  return specOf(lease).holderIdentity;
}

/** What the engine reads of `lease` (lib/engine/shards.ts), with `fallbackSeconds` where it has no duration. */
export function leaseView(lease: KubeObject, fallbackSeconds: number): LeaseView {
  const spec = specOf(lease);
  return { holder: spec.holderIdentity, renewedAt: spec.renewTime === undefined ? undefined : Date.parse(spec.renewTime), durationSeconds: spec.leaseDurationSeconds ?? fallbackSeconds };
}

function specOf(lease: KubeObject): LeaseSpec {
  return (lease.spec ?? {}) as LeaseSpec;
}

async function replaceSpec(client: KubeClient, lease: KubeObject, changes: LeaseSpec): Promise<void> {
  await client.update({ ...lease, spec: { ...specOf(lease), ...changes } });
}

/** A MicroTime as the API server stores it (microseconds). */
function microTime(ms: number): string {
  return new Date(ms).toISOString().replace('Z', '000Z');
}
