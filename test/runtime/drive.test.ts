import { DrivePass, driveUntilSettled } from '../../lib/runtime/drive';

/** A fake clock the loop's sleeps advance, and the sleeps it asked for. */
function fakeTime(start = 1_000) {
  let t = start;
  const sleeps: number[] = [];
  return {
    now: () => t,
    sleep: async (ms: number) => {
      sleeps.push(ms);
      t += ms;
    },
    sleeps,
  };
}

/** A pass that answers from a list, recording the time of each call. */
function scripted<T>(answers: DrivePass<T>[], clock: { now(): number }) {
  const calls: number[] = [];
  return {
    calls,
    pass: async () => {
      calls.push(clock.now());
      const next = answers.shift();
      if (!next) throw new Error('the loop passed once more than scripted');
      return next;
    },
  };
}

test('sleeps until each pass names the next one due, polls when it names none, and returns the settled result', async () => {
  const time = fakeTime();
  const run = scripted<string>([{ settled: false, wakeAt: 1_250 }, { settled: false }, { settled: true, result: 'done' }], time);
  const result = await driveUntilSettled(run.pass, { deadlineAt: 10_000, pollMs: 400, onDeadline: () => undefined, ...time });
  expect(result).toBe('done');
  expect(run.calls).toEqual([1_000, 1_250, 1_650]);
  expect(time.sleeps).toEqual([250, 400]);
});

test('a wake-up time in the past is a pass at once; no sleep runs past the deadline', async () => {
  const time = fakeTime();
  const run = scripted<number>([{ settled: false, wakeAt: 900 }, { settled: false, wakeAt: 5_000 }, { settled: true, result: 7 }], time);
  const onDeadline = jest.fn();
  await driveUntilSettled(run.pass, { deadlineAt: 2_000, pollMs: 400, onDeadline, ...time });
  expect(time.sleeps).toEqual([0, 1_000]);
  expect(run.calls).toEqual([1_000, 1_000, 2_000]);
  // The third pass settled at the deadline: the deadline decision is not needed.
  expect(onDeadline).not.toHaveBeenCalled();
});

test('at the deadline the decision runs once; a throw ends the run with its error', async () => {
  const time = fakeTime();
  const run = scripted<never>([{ settled: false }, { settled: false }], time);
  const onDeadline = jest.fn(() => {
    throw new Error('not complete after 1s');
  });
  await expect(driveUntilSettled(run.pass, { deadlineAt: 1_400, pollMs: 400, onDeadline, ...time })).rejects.toThrow('not complete after 1s');
  expect(onDeadline).toHaveBeenCalledTimes(1);
  expect(run.calls).toEqual([1_000, 1_400]);
});

test('a decision that returns keeps driving with no deadline (a rollback runs to its end) and is not asked again', async () => {
  const time = fakeTime();
  const run = scripted<string>([{ settled: false }, { settled: false }, { settled: false, wakeAt: 9_000 }, { settled: true, result: 'rolled back' }], time);
  const onDeadline = jest.fn();
  const result = await driveUntilSettled(run.pass, { deadlineAt: 1_400, pollMs: 400, onDeadline, ...time });
  expect(result).toBe('rolled back');
  expect(onDeadline).toHaveBeenCalledTimes(1);
  // After the decision: a pass at once, then a sleep to 9 000 although the deadline has passed.
  expect(run.calls).toEqual([1_000, 1_400, 1_400, 9_000]);
});
