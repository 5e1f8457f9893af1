import { Chart, ChartProps } from 'cdk8s';
import { Construct } from 'constructs';
import { PodTemplateJson, RoleBasedGroup } from '../lib';

function sglang(role: 'prefill' | 'decode', image: string): PodTemplateJson {
  return {
    spec: {
      containers: [{ name: role, image, args: [`--disaggregation-mode=${role}`, '--port=30000'], resources: { limits: { 'nvidia.com/gpu': '1' } } }],
    },
  };
}

/**
 * Disaggregated prefill/decode serving with version-matched routing (docs/rbg-coordination.md,
 * "Version-matched routing"): the operator rolls 4 prefill and 2 decode instances in coordinated
 * rounds, and rayshift runs one sglang-router per release, each over only its release's prefill and
 * decode pods, behind an HTTPRoute on the Gateway `inference`, so no request pairs a prefill and a
 * decode of different releases. To roll a new image, synthesize with `image` set to it and
 * `previousRevision` set to the group's `routerRevision('pd-rollout')` before the change: the old
 * release's router stays, and the route starts with all traffic on it; the operator then moves the
 * route's weights as new prefill and decode replicas become ready (Event `RouterWeights`), and
 * `rayshift status rbg/pd-routed` shows each release's weight. Once the rollout is complete and the
 * route sends the old release 0, the operator scales the old release's router Deployment to 0
 * replicas (Event `RouterScaled`) and scales it back before a later rollout sends it traffic again;
 * with Argo CD, ignore the router Deployments' `/spec/replicas` (docs/rbg-coordination.md).
 */
export class PrefillDecodeRoutedChart extends Chart {
  /** The group, for its `routerRevision('pd-rollout')`. */
  public readonly group: RoleBasedGroup;

  constructor(scope: Construct, id: string, props: ChartProps & { image?: string; previousRevision?: string } = {}) {
    super(scope, id, props);
    const image = props.image ?? 'lmsysorg/sglang:v0.5.5';
    this.group = new RoleBasedGroup(this, 'pd', {
      metadata: { name: 'pd-routed', namespace: props.namespace },
      executor: 'operator',
      roles: [
        { name: 'prefill', replicas: 4, template: sglang('prefill', image) },
        { name: 'decode', replicas: 2, template: sglang('decode', image) },
      ],
      coordination: [
        {
          name: 'pd-rollout',
          roles: ['prefill', 'decode'],
          rollingUpdate: { maxSkew: '50%', maxUnavailable: 1 },
          router: {
            kind: 'sglang',
            image: 'lmsysorg/sglang:v0.5.5',
            gateway: { name: 'inference' },
            ...(props.previousRevision !== undefined ? { previousRevision: props.previousRevision } : {}),
          },
        },
      ],
    });
  }
}
