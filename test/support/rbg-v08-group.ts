/**
 * The RBG v0.8 prefill/decode group of the v0.8 suites (cluster-rbg-v08-webhook on the real
 * controller, rbg-rollout-v08 on the simulator), as the `RoleBasedGroup` construct synthesizes it
 * with `rbgVersion: 'v0.8'` and `executor: 'operator'`: prefill a leader/worker role with a
 * `restartPolicyConfig`, decode a standalone one, both coordinated.
 */
import { Testing } from 'cdk8s';
import { RoleBasedGroup } from '../../lib/cdk8s/rolebasedgroup';
import { KubeObject } from '../../lib/runtime/kube/types';

/** The `restartPolicyConfig` of the prefill role. */
export const PREFILL_RESTART_POLICY = { type: 'RecreateRoleInstanceOnPodRestart', baseDelaySeconds: 10, maxDelaySeconds: 120 } as const;

/** Group `name` in `namespace` at `image`, with `replicas` per role. */
export function v08Group(name: string, namespace: string, image: string, replicas: { readonly prefill: number; readonly decode: number }): KubeObject {
  const template = { spec: { containers: [{ name: 'engine', image }] } };
  const chart = Testing.chart();
  new RoleBasedGroup(chart, 'g', {
    metadata: { name, namespace },
    rbgVersion: 'v0.8',
    executor: 'operator',
    roles: [
      { name: 'prefill', replicas: replicas.prefill, leaderWorkerSize: 2, template, restartPolicyConfig: PREFILL_RESTART_POLICY },
      { name: 'decode', replicas: replicas.decode, template },
    ],
    coordination: [{ name: 'pd', roles: ['prefill', 'decode'], rollingUpdate: { maxSkew: '25%', maxUnavailable: 1 }, progressDeadlineSeconds: 180 }],
  });
  const objects = Testing.synth(chart) as KubeObject[];
  if (objects.length !== 1 || objects[0].kind !== 'RoleBasedGroup') throw new Error(`expected one RoleBasedGroup, got ${objects.map((o) => o.kind).join(', ')}`);
  return objects[0];
}
