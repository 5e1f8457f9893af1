/**
 * How many Pods a serve Service can send requests to: the ready endpoints of its EndpointSlices,
 * counted as KubeRay counts them (`calculateNumServeEndpointsFromSlices`: distinct Pods whose
 * endpoint is `ready: true`; an endpoint in several slices, as in dual-stack, counts once).
 */
import { ENDPOINT_SLICE, SERVICE_NAME_LABEL } from '../../spec/object-names';
import { asArray, asObject } from '../../spec/read';
import { ObjectReader } from '../kube/object-reader';
import { KubeObject } from '../kube/types';

/** Distinct ready Pods over `slices`; undefined when there is no slice at all (nothing has observed the Service yet). */
export function readyServeEndpoints(slices: readonly KubeObject[]): number | undefined {
  if (slices.length === 0) return undefined;
  const pods = new Set<string>();
  for (const slice of slices) {
    for (const raw of asArray((slice as { endpoints?: unknown }).endpoints)) {
      const endpoint = asObject(raw);
      if (asObject(endpoint.conditions).ready !== true) continue;
      const target = asObject(endpoint.targetRef);
      pods.add(String(target.uid ?? target.name ?? asArray(endpoint.addresses)[0]));
    }
  }
  return pods.size;
}

/** The ready endpoints of Service `namespace/service` (`readyServeEndpoints` of its EndpointSlices). */
export async function observeServeEndpoints(reader: ObjectReader, namespace: string, service: string): Promise<number | undefined> {
  return readyServeEndpoints(await reader.list(ENDPOINT_SLICE, namespace, { [SERVICE_NAME_LABEL]: service }));
}
