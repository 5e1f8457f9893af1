import { Chart, ChartProps } from 'cdk8s';
import { Construct } from 'constructs';
import { PodTemplateJson, RoleBasedGroup, RoleBasedGroupWarmup } from '../lib';

const GPU_TOLERATION = { key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' };

function sglang(role: 'prefill' | 'decode', image: string): PodTemplateJson {
  return {
    spec: {
      containers: [{ name: role, image, args: [`--disaggregation-mode=${role}`], resources: { limits: { 'nvidia.com/gpu': '1' } } }],
      tolerations: [GPU_TOLERATION],
    },
  };
}

/**
 * RBG v0.8 image warmups, two ways:
 *
 * - the group's `warmup` option: before each coordinated rollout the rayshift operator preloads the
 *   new image on the nodes the prefill and decode Pods run on, and moves no partition until every
 *   node is warm (or, after 10 minutes or one failed node, holds the group on the old revision), and
 *   rolls both roles back in tandem when the rollout makes no progress for 15 minutes;
 * - a standalone `RoleBasedGroupWarmup` that pre-pulls the next release's image on every GPU node
 *   ahead of time, two nodes at a time, deleted by RBG an hour after it finishes.
 */
export class PrefillDecodeWarmupChart extends Chart {
  constructor(scope: Construct, id: string, props: ChartProps & { image?: string; nextImage?: string } = {}) {
    super(scope, id, props);
    const image = props.image ?? 'lmsysorg/sglang:v0.5.5';
    new RoleBasedGroup(this, 'pd', {
      metadata: { name: 'pd-warm' },
      rbgVersion: 'v0.8',
      executor: 'operator',
      roles: [
        { name: 'prefill', replicas: 8, template: sglang('prefill', image) },
        { name: 'decode', replicas: 4, template: sglang('decode', image) },
      ],
      // A rollout without progress for 15 minutes is rolled back in tandem; on v0.8 no rollback write
      // reaches partition = replicas (its webhook refuses it): the last ordinals are reverted in place.
      coordination: [{ name: 'pd-rollout', roles: ['prefill', 'decode'], rollingUpdate: { maxSkew: '25%', maxUnavailable: '25%' }, progressDeadlineSeconds: 900, rollbackOnDeadline: true }],
      warmup: { globalTimeoutSeconds: 600, maxFailedNodes: 0, onFailure: 'Fail', tolerations: [GPU_TOLERATION] },
    });
    new RoleBasedGroupWarmup(this, 'next-release', {
      metadata: { name: 'prepull-sglang-next' },
      nodes: {
        selector: { 'nvidia.com/gpu.present': 'true' },
        actions: { imagePreload: { images: [props.nextImage ?? 'lmsysorg/sglang:v0.5.6'] } },
      },
      policies: { parallelism: 2, backoffLimitPerNode: 2, maxFailedNodes: 1, globalTimeoutSeconds: 1800, ttlSecondsAfterFinished: 3600 },
      tolerations: [GPU_TOLERATION],
    });
  }
}
