import { Chart, ChartProps } from 'cdk8s';
import { Construct } from 'constructs';
import { PodTemplateJson, RoleBasedGroup } from '../lib';

function sglang(role: 'prefill' | 'decode' | 'router', gpus: number): PodTemplateJson {
  return {
    spec: {
      containers: [
        {
          name: role,
          image: 'lmsysorg/sglang:v0.5.5',
          args: role === 'router' ? ['--pd-disaggregation'] : [`--disaggregation-mode=${role}`],
          resources: gpus > 0 ? { limits: { 'nvidia.com/gpu': String(gpus) } } : { limits: { cpu: '2', memory: '4Gi' } },
        },
      ],
    },
  };
}

/**
 * Disaggregated prefill/decode serving with a coordinated rolling update: 40 prefill and 20
 * decode instances move to a new version within 10% of each other, at most 10% of each role
 * down, and the first 20% of each role kept on the old version (a canary partition).
 */
export class PrefillDecodeChart extends Chart {
  constructor(scope: Construct, id: string, props: ChartProps = {}) {
    super(scope, id, props);
    new RoleBasedGroup(this, 'pd', {
      metadata: { name: 'pd-inference' },
      roles: [
        { name: 'router', replicas: 2, template: sglang('router', 0) },
        { name: 'prefill', replicas: 40, template: sglang('prefill', 1) },
        { name: 'decode', replicas: 20, template: sglang('decode', 1) },
      ],
      coordination: [
        {
          name: 'pd-rollout',
          roles: ['prefill', 'decode'],
          rollingUpdate: { maxSkew: '10%', maxUnavailable: '10%', partition: '20%' },
        },
      ],
    });
  }
}

/**
 * AffinityScheduling: every batch of 2 prefill and 1 decode pods shares one node, batches
 * released one after another. Rendered into per-batch roles with pod affinity.
 *
 * Written as v1alpha1, for clusters still on RBG v0.6.0: the batches are plain roles with
 * dependencies and pod affinity that rayshift renders itself, so they need nothing from v0.7.0,
 * and v0.7.0 still serves v1alpha1.
 */
export class AffinityScheduledChart extends Chart {
  constructor(scope: Construct, id: string, props: ChartProps = {}) {
    super(scope, id, props);
    new RoleBasedGroup(this, 'pd', {
      metadata: { name: 'pd-colocated' },
      version: 'v1alpha1',
      roles: [
        { name: 'prefill', replicas: 4, template: sglang('prefill', 1) },
        { name: 'decode', replicas: 2, template: sglang('decode', 1) },
      ],
      coordination: [
        {
          name: 'colocate',
          roles: ['prefill', 'decode'],
          affinityScheduling: { topologyKey: 'kubernetes.io/hostname', ratios: { prefill: 2, decode: 1 }, batchMode: 'Sequential' },
        },
      ],
    });
  }
}
