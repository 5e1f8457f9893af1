/** The error a call under test must fail with, for tests that go on to check its fields. */

/** The error `promise` rejects with, checked to be a `type`; fails the test when the call succeeds. */
export async function rejectionOf<E extends Error>(promise: Promise<unknown>, type: abstract new (...args: never[]) => E): Promise<E> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(type);
    return err as E;
  }
  throw new Error(`expected a ${type.name}, the call succeeded`);
}
