import { waitAtMost } from './wait-at-most';

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
