import { resolveSharding, validateSharding } from '../../lib/spec/sharding';

describe('validateSharding', () => {
  it('accepts the defaults and a sharded fleet', () => {
    expect(validateSharding({})).toEqual({ errors: [], warnings: [] });
    expect(validateSharding({ shards: 12, leaseDurationSeconds: 15, renewMs: 5000 })).toEqual({ errors: [], warnings: [] });
  });

  it('names the field, the value and the range', () => {
    expect(validateSharding({ shards: 0 }).errors.map((e) => `${e.path}: ${e.message}`)).toEqual(['shards: must be an integer from 1 to 256; got 0']);
    expect(validateSharding({ shards: 2.5, leaseDurationSeconds: 1 }).errors.map((e) => `${e.path}: ${e.message}`)).toEqual([
      'shards: must be an integer from 1 to 256; got 2.5',
      'leaseDurationSeconds: must be an integer from 2 to 3600 (seconds); got 1',
    ]);
    expect(validateSharding({ renewMs: 50 }).errors.map((e) => e.message)).toEqual(['must be an integer of at least 100 (ms); got 50']);
  });

  it('refuses a renewal period that leaves less than two renewals before a shard is given up', () => {
    expect(validateSharding({ leaseDurationSeconds: 15, renewMs: 5001 }).errors.map((e) => `${e.path}: ${e.message}`)).toEqual([
      'renewMs: must be at most a third of leaseDurationSeconds (15 s: at most 5000 ms), so a replica misses two renewals before it gives a shard up; got 5001',
    ]);
    expect(validateSharding({ leaseDurationSeconds: 6 }).errors.map((e) => e.path)).toEqual(['renewMs']);
  });
});

describe('resolveSharding', () => {
  it('applies the defaults: one shard, a 15 s lease renewed every 5 s', () => {
    expect(resolveSharding({})).toEqual({ shards: 1, leaseDurationSeconds: 15, renewMs: 5000 });
    expect(resolveSharding({ shards: 4 })).toEqual({ shards: 4, leaseDurationSeconds: 15, renewMs: 5000 });
  });
});
