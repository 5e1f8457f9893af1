/** Runs a Kubernetes call and maps its failure to a google.rpc code (see `toConnectError`). */
import { toConnectError, type Subject } from '../errors';

/** The result of `call`, or a ConnectError describing `subject` when it fails. */
export async function kubeCall<T>(subject: Subject, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (e) {
    throw toConnectError(e, subject);
  }
}
