/**
 * What counts as a conflict: the one rule, for every writer that re-reads and re-plans when the API
 * server refuses a write because the object moved under it (the route writer, the RBG reconciler).
 * The runtime only classifies an HTTP error into a `WriteRefusal`; the decision is made here.
 */

/** A write the API server refused, in the engine's terms. */
export interface WriteRefusal {
  /** The HTTP status of the refusal. */
  readonly status: number;
  /** How many field causes (`Status.details.causes`) the refusal listed. */
  readonly fieldCauses: number;
}

/**
 * True when re-reading and planning again can succeed: 409 Conflict, or 422 without field causes
 * (kube-apiserver answers a failed JSON patch `test` op, or an op on a path that is gone, with 422
 * "the server rejected our request due to an error in our request" and no causes). A 422 listing
 * field causes is a schema violation of the patched object, which a re-read would not fix: it is
 * not a conflict, and is reported at once instead of being retried.
 */
export function isWriteConflict(refusal: WriteRefusal | undefined): boolean {
  if (refusal === undefined) return false;
  return refusal.status === 409 || (refusal.status === 422 && refusal.fieldCauses === 0);
}
