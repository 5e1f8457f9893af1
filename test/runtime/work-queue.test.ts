import { WorkQueue } from '../../lib/runtime/work-queue';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('WorkQueue', () => {
  afterEach(() => jest.useRealTimers());

  test('a key added several times while queued is reconciled once', async () => {
    const seen: string[] = [];
    const gate = deferred();
    const q = new WorkQueue(async (k) => {
      seen.push(k);
      await gate.promise;
    }, { concurrency: 1 });
    q.add('a'); // starts at once and holds the only worker
    q.add('b');
    q.add('b');
    q.add('b');
    gate.resolve();
    await q.idle();
    expect(seen).toEqual(['a', 'b']);
  });

  test('a key added while it is being reconciled runs once more afterwards, never concurrently', async () => {
    let running = 0;
    let maxRunning = 0;
    const gates = [deferred(), deferred()];
    let calls = 0;
    const q = new WorkQueue(async () => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      await gates[Math.min(calls++, 1)].promise;
      running--;
    }, { concurrency: 4 });
    q.add('a');
    await Promise.resolve();
    q.add('a');
    q.add('a');
    gates[0].resolve();
    gates[1].resolve();
    await q.idle();
    await q.idle();
    expect(calls).toBe(2);
    expect(maxRunning).toBe(1);
  });

  test('no more than `concurrency` keys run at once', async () => {
    let running = 0;
    let maxRunning = 0;
    const q = new WorkQueue(async () => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      await new Promise((r) => setImmediate(r));
      running--;
    }, { concurrency: 3 });
    for (let i = 0; i < 20; i++) q.add(`k${i}`);
    await q.idle();
    expect(maxRunning).toBe(3);
  });

  test('due keys wake in due-time order through one timer, and an earlier wake-up replaces a later one', async () => {
    jest.useFakeTimers({ now: 1_000_000 });
    const seen: [string, number][] = [];
    const q = new WorkQueue(async (k) => void seen.push([k, Date.now()]));
    q.addAt('late', 1_000_300);
    q.addAt('early', 1_000_100);
    q.addAt('moved', 1_000_500);
    q.addAt('moved', 1_000_200);
    q.addAt('moved', 1_000_400); // later than the pending wake-up: ignored
    expect(jest.getTimerCount()).toBe(1);
    await jest.advanceTimersByTimeAsync(99);
    expect(seen).toEqual([]);
    await jest.advanceTimersByTimeAsync(1000);
    expect(seen).toEqual([
      ['early', 1_000_100],
      ['moved', 1_000_200],
      ['late', 1_000_300],
    ]);
    await q.stop();
  });

  test('a key woken at its due time runs before keys queued by events, and once even if it was queued too', async () => {
    jest.useFakeTimers({ now: 0 });
    const seen: string[] = [];
    const gate = deferred();
    const q = new WorkQueue(async (k) => {
      seen.push(k);
      if (k === 'busy') await gate.promise;
    }, { concurrency: 1 });
    q.add('busy'); // holds the only worker
    q.add('event-1');
    q.add('both'); // queued by an event, then due as well
    q.add('event-2');
    q.addAt('due', 10);
    q.addAt('both', 20);
    await jest.advanceTimersByTimeAsync(30);
    expect(seen).toEqual(['busy']);
    gate.resolve();
    await jest.advanceTimersByTimeAsync(1);
    await q.idle();
    expect(seen).toEqual(['busy', 'due', 'both', 'event-1', 'event-2']);
    await q.stop();
  });

  test('a key that comes due while it runs re-runs ahead of keys queued by events', async () => {
    jest.useFakeTimers({ now: 0 });
    const seen: string[] = [];
    const gate = deferred();
    const q = new WorkQueue(async (k) => {
      seen.push(k);
      if (seen.length === 1) await gate.promise;
    }, { concurrency: 1 });
    q.add('a');
    q.add('event');
    q.addAt('a', 10);
    await jest.advanceTimersByTimeAsync(20);
    gate.resolve();
    await jest.advanceTimersByTimeAsync(1);
    await q.idle();
    expect(seen).toEqual(['a', 'a', 'event']);
    await q.stop();
  });

  test('a failing key is reported and retried with doubling backoff', async () => {
    jest.useFakeTimers({ now: 0 });
    const attempts: number[] = [];
    const errors: number[] = [];
    const q = new WorkQueue(
      async () => {
        attempts.push(Date.now());
        if (attempts.length < 3) throw new Error('conflict');
      },
      { retryBaseMs: 100, onError: (_k, _e, attempt) => errors.push(attempt) },
    );
    q.add('a');
    await jest.advanceTimersByTimeAsync(1000);
    expect(errors).toEqual([1, 2]);
    expect(attempts).toEqual([0, 100, 300]);
    await q.stop();
  });

  test('retryFailedNow() runs the keys waiting out a failure at once, once each, and leaves the others alone', async () => {
    jest.useFakeTimers({ now: 0 });
    const attempts: string[] = [];
    let failing = true;
    const q = new WorkQueue(
      async (k) => {
        attempts.push(`${k}@${Date.now()}`);
        if (failing && k === 'broken') throw new Error('ECONNREFUSED');
      },
      { retryBaseMs: 10_000 },
    );
    q.add('broken');
    q.addAt('stepping', 50_000);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(attempts).toEqual(['broken@0']);
    failing = false;
    q.retryFailedNow();
    await jest.advanceTimersByTimeAsync(1);
    await q.idle();
    // The retry ran at 1 s, not at its 10 s backoff, and the backoff's own wake-up does not run it again.
    await jest.advanceTimersByTimeAsync(20_000);
    expect(attempts).toEqual(['broken@0', 'broken@1000']);
    // A key that never failed keeps its due time.
    await jest.advanceTimersByTimeAsync(30_000);
    expect(attempts).toEqual(['broken@0', 'broken@1000', 'stepping@50000']);
    await q.stop();
  });

  test('after stop() nothing new runs', async () => {
    jest.useFakeTimers({ now: 0 });
    const seen: string[] = [];
    const q = new WorkQueue(async (k) => void seen.push(k));
    await q.stop();
    q.add('a');
    q.addAt('b', Date.now() + 1);
    // Nothing is scheduled (a stopped queue arms no timer), and a minute of the clock runs nothing.
    expect(jest.getTimerCount()).toBe(0);
    await jest.advanceTimersByTimeAsync(60_000);
    expect(seen).toEqual([]);
  });

  test('settled resolves once the matching keys in flight are done, whatever else runs', async () => {
    const gates = new Map([['shard-1/a', deferred()], ['shard-1/b', deferred()], ['shard-2/c', deferred()]]);
    const q = new WorkQueue((k) => gates.get(k)!.promise, { concurrency: 3 });
    for (const k of gates.keys()) q.add(k);
    let settled = false;
    const wait = q.settled((k) => k.startsWith('shard-1/')).then(() => (settled = true));
    gates.get('shard-1/a')!.resolve();
    await new Promise((r) => setImmediate(r));
    expect(settled).toBe(false); // shard-1/b still runs
    gates.get('shard-1/b')!.resolve();
    await wait;
    expect(settled).toBe(true);
    expect(q.size).toBe(1); // shard-2/c is still running
    gates.get('shard-2/c')!.resolve();
    await q.idle();
    await expect(q.settled(() => true)).resolves.toBeUndefined(); // nothing runs: at once
  });
});
