import { waitAtMost, waitFor } from './wait-at-most';

test('true when the promise settles first, false when the time runs out', async () => {
  await expect(waitAtMost(Promise.resolve(), 1000)).resolves.toBe(true);
  await expect(waitAtMost(Promise.reject(new Error('exited badly')), 1000)).resolves.toBe(true);
  await expect(waitAtMost(new Promise(() => undefined), 20)).resolves.toBe(false);
});

test('leaves no timer behind when the promise settles first', async () => {
  const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  const before = timers();
  await waitAtMost(Promise.resolve(), 60_000);
  expect(timers()).toBe(before);
});

describe('waitFor', () => {
  test('re-checks when its event source fires, not only at its poll period', async () => {
    let ready = false;
    const listeners = new Set<() => void>();
    // A poll period far beyond the test's timeout: only the event can end this wait.
    const wait = waitFor(() => ready, 'the flag', { everyMs: 600_000, timeoutMs: 600_000, wake: (recheck) => (listeners.add(recheck), () => listeners.delete(recheck)) });
    await Promise.resolve();
    ready = true;
    for (const l of listeners) l();
    await wait;
    expect(listeners.size).toBe(0); // unsubscribed
  });

  describe('on jest\'s fake clock', () => {
    beforeEach(() => jest.useFakeTimers());
    afterEach(() => jest.useRealTimers());

    test('fails after its timeout naming what it waited for and the last reason given', async () => {
      let n = 0;
      const wait = expect(waitFor(() => `seen ${++n}`, 'the thing', { timeoutMs: 1000, everyMs: 100, explain: () => 'log tail' })).rejects.toThrow('timed out after 1000 ms waiting for the thing; last: seen 11\nlog tail');
      await jest.advanceTimersByTimeAsync(1000);
      await wait;
    });

    test('a throwing check ends the wait unless retryErrors; abortIf ends it at once', async () => {
      await expect(waitFor(() => { throw new Error('boom'); }, 'x')).rejects.toThrow('boom');
      let calls = 0;
      const retried = waitFor(() => { if (++calls < 3) throw new Error('not yet'); return true; }, 'x', { retryErrors: true, everyMs: 10 });
      await jest.advanceTimersByTimeAsync(20);
      await retried;
      expect(calls).toBe(3);
      await expect(waitFor(() => false, 'the app', { abortIf: () => 'ray exited' })).rejects.toThrow('ray exited while waiting for the app');
    });
  });
});
