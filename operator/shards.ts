/**
 * A sharded operator (`rayshift operator --shards N`, N > 1): every replica watches everything and
 * works only on the services and groups of the shards it holds (lib/runtime/kube/shard-leases.ts),
 * so replicas add capacity instead of standing by. Each controller skips a key it does not own at
 * the start of its reconcile, queues a shard's objects when the replica gains it (`claim`), and lets
 * the shard's reconciles in flight finish before the replica gives it up (`drain`).
 */
import { shardOf, type ObjectOwner } from '../lib/engine/shards';
import type { KubeClient } from '../lib/runtime/kube/client';
import { ShardLeases } from '../lib/runtime/kube/shard-leases';
import type { KubeObject } from '../lib/runtime/kube/types';

/** Which objects a controller of this replica may work on now. */
export interface OwnedShards {
  /** Whether this replica works on `namespace/name` now. */
  owns(namespace: string, name: string): boolean;
  /** The shard of `namespace/name`. */
  shardOf(namespace: string, name: string): number;
}

/** What a controller does as its replica gains or gives up a shard. */
export interface ShardedController {
  /** Queues every object of `shard` (the replica holds it now). */
  claim(shard: number): void;
  /** Resolves once no reconcile of an object of `shard` is in flight (the replica no longer owns it). */
  drain(shard: number): Promise<void>;
}

/** The shard of a work queue key `namespace/name`. */
export function shardOfKey(shards: OwnedShards, key: string): number {
  const [namespace, name] = key.split('/');
  return shards.shardOf(namespace, name);
}

/** The work queue keys (`namespace/name`) of the `objects` in `shard`. */
export function keysInShard(shards: OwnedShards, objects: readonly KubeObject[], shard: number): string[] {
  return objects.map((o) => `${o.metadata.namespace}/${o.metadata.name}`).filter((key) => shardOfKey(shards, key) === shard);
}

/**
 * The owner a replica records in the status of each object it works on: its identity and, when the
 * operator is sharded, the object's shard (none without an identity).
 */
export function ownerRecord(identity: string | undefined, shards: OwnedShards | undefined): (namespace: string, name: string) => ObjectOwner | undefined {
  if (identity === undefined) return () => undefined;
  return (namespace, name) => (shards ? { replica: identity, shard: shards.shardOf(namespace, name) } : { replica: identity });
}

/** Options of `OperatorShards`. */
export interface OperatorShardsOptions {
  /** Namespace of the Leases. */
  readonly namespace: string;
  /** Prefix of the Leases' names. */
  readonly prefix: string;
  /** This replica's identity (its Pod name). */
  readonly identity: string;
  /** Shard count and Lease timing, resolved (lib/spec/sharding.ts). */
  readonly sharding: { readonly shards: number; readonly leaseDurationSeconds: number; readonly renewMs: number };
  /** Where shard moves and failed renewals are logged. */
  readonly log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

/** See the file comment. */
export class OperatorShards implements OwnedShards {
  private readonly leases: ShardLeases;
  private controllers: readonly ShardedController[] = [];

  constructor(client: KubeClient, private readonly options: OperatorShardsOptions) {
    const { sharding, log } = options;
    this.leases = new ShardLeases(client, {
      namespace: options.namespace,
      prefix: options.prefix,
      identity: options.identity,
      ...sharding,
      onAcquired: (shard) => {
        log.info({ shard, held: this.leases.held() }, 'holding shard');
        for (const c of this.controllers) c.claim(shard);
      },
      drain: async (shard) => {
        await Promise.all(this.controllers.map((c) => c.drain(shard)));
        log.info({ shard }, 'gave shard up');
      },
      onError: (err) => log.warn({ err: (err as Error).message }, 'shard lease renewal failed; retrying'),
    });
  }

  owns(namespace: string, name: string): boolean {
    return this.leases.owns(this.shardOf(namespace, name));
  }

  shardOf(namespace: string, name: string): number {
    return shardOf(namespace, name, this.options.sharding.shards);
  }

  /** Starts holding shards for `controllers` (started: their caches list what a claim queues); resolves after the first renewal. */
  start(controllers: readonly ShardedController[]): Promise<void> {
    this.controllers = controllers;
    return this.leases.start();
  }

  /** Drains and releases every shard held, then the replica's member Lease. */
  stop(): Promise<void> {
    return this.leases.stop();
  }
}
