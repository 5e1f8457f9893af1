/** Polling a dashboard page's data while it is shown. */
import { useEffect, useState } from 'preact/hooks';
import { ApiError } from './api';

/**
 * Loads with `load` at once and then every `periodMs` until the page unmounts or `deps` change,
 * handing each result to `onValue`. Returns the last failure's message, cleared by a success.
 */
export function usePolling<T>(load: () => Promise<T>, onValue: (value: T) => void, periodMs: number, deps: readonly unknown[]): string | undefined {
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tick = async () => {
      try {
        const value = await load();
        if (stopped) return;
        onValue(value);
        setError(undefined);
      } catch (e) {
        if (!stopped) setError(e instanceof ApiError ? e.message : 'loading failed');
      }
      if (!stopped) timer = setTimeout(tick, periodMs);
    };
    void tick();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, deps);
  return error;
}
