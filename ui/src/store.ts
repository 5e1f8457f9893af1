/**
 * Split history per RayService (`namespace/name`), kept for the life of the page so that the list's
 * sparklines and the rollout chart share what either has seen.
 */
import { appendSample, type Sample } from './model';

const histories = new Map<string, Sample[]>();

/** The samples seen of a service. */
export function historyOf(key: string): Sample[] {
  return histories.get(key) ?? [];
}

/** Records a sample of a service; returns its history. */
export function record(key: string, sample: Sample): Sample[] {
  const next = appendSample(historyOf(key), sample);
  histories.set(key, next);
  return next;
}
