/**
 * Compute templates as ConfigMaps, in KubeRay's layout: name = template name, labels
 * `ray.io/config-type=compute-template` and `ray.io/compute-template=<name>`, data keys `name`,
 * `namespace`, `cpu`, `memory`, `memory_unit`, `gpu`, `gpu_accelerator`, `extended_resources` (JSON)
 * and `tolerations` (JSON).
 */
import { create } from '@bufbuild/protobuf';
import type { KubeObject } from '../../runtime/kube/types';
import { ComputeTemplateSchema, type ComputeTemplate } from '../gen/rayshift/v1/compute_template_pb';

/** Label marking a ConfigMap as a compute template. */
export const CONFIG_TYPE_LABEL = 'ray.io/config-type';
/** Value of `CONFIG_TYPE_LABEL` on templates. */
export const COMPUTE_TEMPLATE_TYPE = 'compute-template';
/** Label naming the template. */
export const COMPUTE_TEMPLATE_LABEL = 'ray.io/compute-template';

/** True when a ConfigMap is a compute template (only those are ever read or deleted as one). */
export function isComputeTemplate(cm: KubeObject): boolean {
  return cm.metadata.labels?.[CONFIG_TYPE_LABEL] === COMPUTE_TEMPLATE_TYPE;
}

/** The ConfigMap of a template. */
export function computeTemplateToConfigMap(t: ComputeTemplate, namespace: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: t.name, namespace, labels: { [CONFIG_TYPE_LABEL]: COMPUTE_TEMPLATE_TYPE, [COMPUTE_TEMPLATE_LABEL]: t.name } },
    data: {
      name: t.name,
      namespace,
      cpu: String(t.cpu),
      memory: String(t.memory),
      memory_unit: t.memoryUnit || 'Gi',
      gpu: String(t.gpu),
      gpu_accelerator: t.gpuAccelerator,
      extended_resources: JSON.stringify(t.extendedResources),
      tolerations: JSON.stringify(t.tolerations.map(({ key, operator, value, effect }) => ({ key, operator, value, effect }))),
    },
  };
}

function parseJson(text: string | undefined, fallback: unknown): unknown {
  try {
    return text ? JSON.parse(text) : fallback;
  } catch {
    return fallback;
  }
}

/** The template a ConfigMap holds (unparsable numbers read as 0). */
export function computeTemplateFromConfigMap(cm: KubeObject): ComputeTemplate {
  const data = (cm.data ?? {}) as Record<string, string | undefined>;
  const uint = (v: string | undefined) => {
    const n = Number(v);
    return Number.isInteger(n) && n >= 0 ? n : 0;
  };
  const extended = parseJson(data.extended_resources, {}) as Record<string, unknown>;
  const tolerations = parseJson(data.tolerations, []);
  return create(ComputeTemplateSchema, {
    name: cm.metadata.name ?? '',
    namespace: cm.metadata.namespace ?? '',
    cpu: uint(data.cpu),
    memory: uint(data.memory),
    memoryUnit: data.memory_unit || 'Gi',
    gpu: uint(data.gpu),
    gpuAccelerator: data.gpu_accelerator ?? '',
    extendedResources: Object.fromEntries(Object.entries(extended).map(([k, v]) => [k, uint(String(v))])),
    tolerations: (Array.isArray(tolerations) ? tolerations : []).map((t) => {
      const o = (t ?? {}) as Record<string, unknown>;
      return { key: String(o.key ?? ''), operator: String(o.operator ?? ''), value: String(o.value ?? ''), effect: String(o.effect ?? '') };
    }),
  });
}
