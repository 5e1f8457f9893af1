import { Chart, ChartProps } from 'cdk8s';
import { Construct } from 'constructs';
import { PodTemplateJson, RoleBasedGroup } from '../lib';

function sglang(role: 'prefill' | 'decode', image: string): PodTemplateJson {
  return {
    spec: {
      containers: [{ name: role, image, args: [`--disaggregation-mode=${role}`], resources: { limits: { 'nvidia.com/gpu': '1' } } }],
    },
  };
}

/**
 * Disaggregated prefill/decode serving whose coordinated rollout the rayshift operator executes
 * (`executor: 'operator'`): 40 prefill and 20 decode instances move to a new image within 10% of
 * each other, every role that can advance doing so each round, at most 10% of each role down. If
 * no replica becomes updated or ready for 5 minutes, every role stops where it stands and the
 * group's `rayshift.dev/rollout-status` annotation names the role that blocks; then (or while it
 * rolls) `rayshift rollback rbg/pd-inference` returns both roles to the previous image in tandem
 * rollback rounds, within the same skew and unavailability bounds. Apply it with
 * server-side apply (Argo CD `ServerSideApply=true`, Flux), so the partitions the operator writes
 * are left alone.
 */
export class PrefillDecodeOperatorChart extends Chart {
  constructor(scope: Construct, id: string, props: ChartProps & { image?: string } = {}) {
    super(scope, id, props);
    const image = props.image ?? 'lmsysorg/sglang:v0.5.5';
    new RoleBasedGroup(this, 'pd', {
      metadata: { name: 'pd-inference' },
      executor: 'operator',
      roles: [
        { name: 'prefill', replicas: 40, template: sglang('prefill', image) },
        { name: 'decode', replicas: 20, template: sglang('decode', image) },
      ],
      coordination: [
        {
          name: 'pd-rollout',
          roles: ['prefill', 'decode'],
          rollingUpdate: { maxSkew: '10%', maxUnavailable: '10%' },
          progressDeadlineSeconds: 300,
        },
      ],
    });
  }
}
