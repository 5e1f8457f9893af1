/**
 * The work queue of an operator controller: a failed reconcile counts as an error and is logged before
 * its retry, and the retries waiting out a backoff run at once when the API server answers again.
 */
import type { Reachability } from '../lib/runtime/kube/reachability';
import { Reconcile, WorkQueue } from '../lib/runtime/work-queue';

/** What a controller's queue reports a failure to. */
export interface ReconcileQueueOptions {
  /** Keys reconciled at once. */
  readonly concurrency: number;
  /** Counter of failed reconciles. */
  readonly errors: { inc(): void };
  /** Where the failure is logged (a warning: the key is retried with backoff). */
  readonly log: { warn(obj: object, msg: string): void };
  /** Log field naming the key, e.g. `rayservice`. */
  readonly keyField: string;
  /** The reachability of the API server the reconciles write to (`KubeClient.reachability`). */
  readonly reachability: Reachability;
}

/** A `WorkQueue` over `reconcile` that counts and logs each failure before retrying the key. */
export function reconcileQueue(reconcile: Reconcile, options: ReconcileQueueOptions): WorkQueue {
  const queue = new WorkQueue(reconcile, {
    concurrency: options.concurrency,
    onError: (key, err, attempt) => {
      options.errors.inc();
      options.log.warn({ [options.keyField]: key, attempt, err: (err as Error).message }, 'reconcile failed; retrying');
    },
  });
  // After an API server outage, a key that failed during it retries when the server is back, not up
  // to 30 s later at the end of its backoff.
  const retryWhenRestored = (): void => {
    if (queue.isStopped) return;
    queue.retryFailedNow();
    options.reachability.onceRestored(retryWhenRestored);
  };
  options.reachability.onceRestored(retryWhenRestored);
  return queue;
}
