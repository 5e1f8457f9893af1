import { RAYSHIFT_API_VERSION } from '../spec/rayservice';
import { JsonObject, asArray, asObject } from '../spec/read';

/** JSON schema of `spec.rayshift`, the extensions rayshift adds to the RayService spec. */
export const RAYSHIFT_EXTENSIONS_SCHEMA: JsonObject = {
  type: 'object',
  description: 'rayshift extensions, executed by the rayshift operator.',
  properties: {
    gatewayRef: {
      type: 'object',
      description: 'Use this existing Gateway instead of creating <name>-gateway.',
      required: ['name'],
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 253 },
        namespace: { type: 'string', maxLength: 63 },
        sectionName: { type: 'string', maxLength: 253 },
      },
    },
    progressDeadlineSeconds: {
      type: 'integer',
      format: 'int32',
      minimum: 1,
      description: 'Roll back when an upgrade makes no progress for this long. Default 600.',
    },
    paused: { type: 'boolean', description: 'Hold the upgrade at its current step.' },
    routeKind: { type: 'string', enum: ['HTTP', 'GRPC'], description: 'Route to write weights to. Default HTTP.' },
  },
};

/**
 * Builds the `rayservices.rayshift.dev` CRD (version v1alpha1) from KubeRay's RayService CRD:
 * the `ray.io/v1` spec schema unchanged, plus `spec.rayshift`, a status of rayshift's own and
 * the status subresource. The upstream CRD is data resolved at build time, never committed.
 */
export function rayshiftRayServiceCrd(kubeRayRayServiceCrd: unknown): JsonObject {
  const upstream = asObject(kubeRayRayServiceCrd);
  const v1 = asArray(asObject(upstream.spec).versions).map(asObject).find((v) => v.name === 'v1');
  if (!v1) throw new Error('the KubeRay RayService CRD has no v1 version');
  const root = asObject(asObject(v1.schema).openAPIV3Schema);
  const spec = structuredClone(asObject(asObject(root.properties).spec));
  const specProperties = { ...asObject(spec.properties), rayshift: RAYSHIFT_EXTENSIONS_SCHEMA };
  const [group, version] = RAYSHIFT_API_VERSION.split('/');
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `rayservices.${group}` },
    spec: {
      group,
      names: { kind: 'RayService', listKind: 'RayServiceList', plural: 'rayservices', singular: 'rayservice', shortNames: ['rsrs'] },
      scope: 'Namespaced',
      versions: [
        {
          name: version,
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec: { ...spec, properties: specProperties },
                status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
              },
            },
          },
        },
      ],
    },
  };
}
