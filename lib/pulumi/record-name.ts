/**
 * The record a RayService run by the Pulumi executor keeps in its namespace (a ConfigMap): its name
 * and label. Apart from service-record.ts, which reads and writes it, so that the public
 * `rayshift/pulumi` types reach no runtime (Kubernetes client) types.
 */

/** Label marking a ConfigMap as the record of a RayService run by the Pulumi executor (value: the service name). */
export const RECORD_LABEL = 'rayshift.dev/pulumi-rayservice';

/** Name of the record of RayService `service`: `<service>-rayshift`. */
export function recordName(service: string): string {
  return `${service}-rayshift`;
}
