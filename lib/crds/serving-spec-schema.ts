import type { JsonObject } from '../spec/read';

/**
 * `status.servingSpec` (`lib/runtime/rayservice/serving-spec.ts`): the spec the serving cluster runs,
 * what `:rollback` restores. `rayClusterConfig` is kept verbatim (a copy of the already defaulted
 * spec), so it hashes exactly like the cluster it describes.
 */
export const SERVING_SPEC_SCHEMA: JsonObject = {
  type: 'object',
  description:
    'The spec the serving RayCluster runs, recorded by the operator while no upgrade is in flight: what a rollback restores. ' +
    'Only writers of the status subresource can change it, unlike the RayClusters themselves.',
  properties: {
    rayClusterName: { type: 'string', maxLength: 253, description: 'The serving RayCluster the record describes.' },
    specHash: { type: 'string', maxLength: 256, description: 'Spec hash of rayClusterConfig (the cluster-spec-hash annotation the operator put on that cluster).' },
    rayClusterConfig: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, description: 'spec.rayClusterConfig the cluster was made from.' },
    serveConfigV2: { type: 'string', description: 'spec.serveConfigV2 the cluster serves (absent when the spec had none).' },
  },
};
