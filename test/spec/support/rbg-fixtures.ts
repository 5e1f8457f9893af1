/**
 * Shared manifests of the rbg-roles, rbg-coordination and rbg-malformed-input tests: a valid
 * v1alpha2 group, its CoordinatedPolicy, and the same group in v1alpha1 with inline coordination.
 */
import { RBG_V1ALPHA1, RBG_V1ALPHA2 } from '../../../lib/spec';
import { podTemplate } from '../fixtures';

/** A valid v1alpha2 group: router 2, prefill 10, decode 5, no role-level rollout settings. */
export function group(): any {
  return {
    apiVersion: RBG_V1ALPHA2,
    kind: 'RoleBasedGroup',
    metadata: { name: 'pd-inference', namespace: 'pd' },
    spec: {
      roles: [
        { name: 'router', replicas: 2, standalonePattern: { template: podTemplate(0) } },
        { name: 'prefill', replicas: 10, standalonePattern: { template: podTemplate(1) } },
        { name: 'decode', replicas: 5, standalonePattern: { template: podTemplate(1) } },
      ],
    },
  };
}

/** A valid CoordinatedPolicy for `group()`: same name and namespace, one rule over prefill and decode. */
export function policy(): any {
  return {
    apiVersion: RBG_V1ALPHA2,
    kind: 'CoordinatedPolicy',
    metadata: { name: 'pd-inference', namespace: 'pd' },
    spec: {
      policies: [
        {
          name: 'pd-rollout',
          roles: ['prefill', 'decode'],
          strategy: {
            rollingUpdate: { maxSkew: '10%', maxUnavailable: '10%', partition: '20%' },
            scaling: { maxSkew: '10%', progression: 'OrderReady' },
          },
        },
      ],
    },
  };
}

/** The same group in v1alpha1, with the rule inline under `spec.coordination` (wire shape: `strategy`). */
export function groupV1Alpha1(): any {
  const g = group();
  g.apiVersion = RBG_V1ALPHA1;
  g.spec.roles = g.spec.roles.map((r: any) => ({ name: r.name, replicas: r.replicas, template: r.standalonePattern.template }));
  g.spec.coordination = [
    { name: 'pd-rollout', roles: ['prefill', 'decode'], strategy: { rollingUpdate: { maxSkew: '10%', maxUnavailable: '10%', partition: '20%' } } },
  ];
  return g;
}
