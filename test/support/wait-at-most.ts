/**
 * Waits for `promise` for at most `ms`; resolves true when it settled first. The timer is cleared
 * either way, so a process that stopped sooner does not keep Jest waiting for the full time.
 */
export async function waitAtMost(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([promise.then(() => true as const, () => true as const), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}
