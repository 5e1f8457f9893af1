import { describeOwner, desiredShards, leaseHeld, liveMembers, shardMoves, shardOf, storedOwner, workUntil } from '../../lib/engine/shards';

// Expected values computed apart from the code under test (FNV-1a 32 and MurmurHash3's finalizer
// written out in Python from their definitions), so a change of hash fails here before it moves
// services between shards in a running fleet.
describe('shardOf', () => {
  it('hashes namespace/name with FNV-1a into the shard count', () => {
    expect([shardOf('default', 'llama', 4), shardOf('default', 'llama', 16)]).toEqual([0, 0]);
    expect([shardOf('default', 'qwen', 4), shardOf('default', 'qwen', 16)]).toEqual([0, 4]);
    expect([shardOf('prod', 'llama', 4), shardOf('prod', 'llama', 16)]).toEqual([2, 2]);
    expect([shardOf('team-a', 'svc-0', 4), shardOf('team-a', 'svc-0', 16)]).toEqual([2, 6]);
    expect([shardOf('team-a', 'svc-1', 4), shardOf('team-a', 'svc-1', 16)]).toEqual([1, 9]);
  });

  it('puts everything in shard 0 when there is one shard', () => {
    expect(shardOf('prod', 'llama', 1)).toBe(0);
  });

  it('spreads sequentially named services evenly', () => {
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < 200; i++) counts[shardOf('team-a', `svc-${i}`, 4)]++;
    expect(counts).toEqual([50, 50, 50, 50]);
  });
});

describe('desiredShards', () => {
  const three = ['replica-a', 'replica-b', 'replica-c'];

  it('gives every shard to exactly one member', () => {
    expect(three.map((m) => desiredShards(three, m, 8))).toEqual([[6], [3, 4, 5], [0, 1, 2, 7]]);
  });

  it('moves only the shards of a member that leaves', () => {
    const two = ['replica-a', 'replica-c'];
    expect(two.map((m) => desiredShards(two, m, 8))).toEqual([[4, 6], [0, 1, 2, 3, 5, 7]]);
  });

  it('counts self among the members when it is not listed yet', () => {
    expect(desiredShards(['replica-a', 'replica-c'], 'replica-b', 8)).toEqual([3, 4, 5]);
  });

  it('separates Pod names of one Deployment that differ only at the end', () => {
    const pods = ['rayshift-operator-7c9f-x2kq', 'rayshift-operator-7c9f-8mzt', 'rayshift-operator-7c9f-qq4l'];
    expect(pods.map((m) => desiredShards(pods, m, 12))).toEqual([[1, 2, 8], [3, 5, 6, 7, 10], [0, 4, 9, 11]]);
  });
});

describe('leases', () => {
  it('is held while renewed less than its duration ago, by a holder', () => {
    expect(leaseHeld({ holder: 'a', renewedAt: 1_000, durationSeconds: 15 }, 15_999)).toBe(true);
    expect(leaseHeld({ holder: 'a', renewedAt: 1_000, durationSeconds: 15 }, 16_000)).toBe(false);
    expect(leaseHeld({ holder: '', renewedAt: 1_000, durationSeconds: 15 }, 2_000)).toBe(false);
    expect(leaseHeld({ holder: 'a', durationSeconds: 15 }, 2_000)).toBe(false);
    expect(leaseHeld(undefined, 2_000)).toBe(false);
  });

  it('lists the live members once each, sorted', () => {
    const members = [
      { holder: 'replica-c', renewedAt: 10_000, durationSeconds: 15 },
      { holder: 'replica-a', renewedAt: 10_000, durationSeconds: 15 },
      { holder: 'replica-b', renewedAt: 1_000, durationSeconds: 5 },
    ];
    expect(liveMembers(members, 12_000)).toEqual(['replica-a', 'replica-c']);
  });

  it('works on a shard until one renewal period before its Lease expires', () => {
    expect(workUntil(100_000, 15, 5_000)).toBe(110_000);
  });
});

describe('shardMoves', () => {
  const three = ['replica-a', 'replica-b', 'replica-c'];
  const now = 100_000;
  const held = (holder: string) => ({ holder, renewedAt: now - 1_000, durationSeconds: 15 });
  const expired = (holder: string) => ({ holder, renewedAt: now - 20_000, durationSeconds: 15 });

  it('acquires its shards that have no Lease yet', () => {
    expect(shardMoves('replica-b', three, new Map(), 8, now)).toEqual({ acquire: [3, 4, 5], renew: [], release: [] });
  });

  it('renews what it holds and should, releases what another member should have', () => {
    const leases = new Map([[3, held('replica-b')], [6, held('replica-b')], [4, held('replica-c')]]);
    // 6 belongs to replica-a; 4 is replica-b's but replica-c holds it: wait for its release or expiry.
    expect(shardMoves('replica-b', three, leases, 8, now)).toEqual({ acquire: [5], renew: [3], release: [6] });
  });

  it('takes a shard of its own whose holder stopped renewing', () => {
    const leases = new Map([[4, expired('replica-c')], [5, { holder: '', renewedAt: now - 1_000, durationSeconds: 1 }]]);
    expect(shardMoves('replica-b', three, leases, 8, now)).toEqual({ acquire: [3, 4, 5], renew: [], release: [] });
  });

  it('holds every shard when it is the only member', () => {
    expect(shardMoves('replica-a', ['replica-a'], new Map([[2, expired('replica-b')]]), 4, now)).toEqual({ acquire: [0, 1, 2, 3], renew: [], release: [] });
  });
});

describe('owner records', () => {
  test('storedOwner reads a replica and a non-negative integer shard, and nothing else', () => {
    expect(storedOwner({ replica: 'rayshift-operator-0', shard: 5 })).toEqual({ replica: 'rayshift-operator-0', shard: 5 });
    expect(storedOwner({ replica: 'rayshift-operator-0' })).toEqual({ replica: 'rayshift-operator-0' });
    expect(storedOwner({ replica: 'r', shard: -1 })).toEqual({ replica: 'r' });
    expect(storedOwner({ replica: 'r', shard: 1.5 })).toEqual({ replica: 'r' });
    expect(storedOwner({ replica: 'r', shard: '2' })).toEqual({ replica: 'r' });
    expect(storedOwner({ shard: 2 })).toBeUndefined();
    expect(storedOwner('replica-a')).toBeUndefined();
    expect(storedOwner(null)).toBeUndefined();
    expect(storedOwner(undefined)).toBeUndefined();
  });

  test('describeOwner names the replica, and the shard when there is one', () => {
    expect(describeOwner({ replica: 'rayshift-operator-7d9f-x2k4p', shard: 5 })).toBe('replica rayshift-operator-7d9f-x2k4p, shard 5');
    expect(describeOwner({ replica: 'rayshift-operator-0', shard: 0 })).toBe('replica rayshift-operator-0, shard 0');
    expect(describeOwner({ replica: 'rayshift-operator-0' })).toBe('replica rayshift-operator-0');
  });
});
