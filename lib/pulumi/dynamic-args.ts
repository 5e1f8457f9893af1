/**
 * Arguments shared by rayshift's dynamic resources (component side): where they connect, and for
 * the resources that follow one object's rollout (`RoleBasedGroupRollout`, `UpgradeProgress`),
 * which object and how long and how often. Each `…Args` extends these; `connectionInputs` and
 * `followedRolloutInputs` map them to resource inputs the same way for all of them.
 */
import * as pulumi from '@pulumi/pulumi';
import { MIGRATION_DEFAULTS } from './migration-inputs';

/** Where a rayshift dynamic resource connects during `pulumi up`. */
export interface ClusterConnectionArgs {
  /** Kubeconfig text; stored as a secret, never an output. @default stack config `rayshift:kubeconfig`, else `$KUBECONFIG` */
  readonly kubeconfig?: pulumi.Input<string>;
  /** Kubeconfig context. @default stack config `rayshift:context`, else the current context */
  readonly context?: pulumi.Input<string>;
}

/** The object whose rollout a dynamic resource follows to its end, and the run settings of following it. */
export interface FollowedRolloutArgs extends ClusterConnectionArgs {
  /** The object's API version: `workloads.x-k8s.io/v1alpha2` or `…/v1alpha1` (a RoleBasedGroup), `ray.io/v1` or `rayshift.dev/v1alpha1` (a RayService). */
  readonly apiVersion: pulumi.Input<string>;
  /** The object's name (the RoleBasedGroup or RayService). */
  readonly name: pulumi.Input<string>;
  /** Namespace. */
  readonly namespace: pulumi.Input<string>;
  /** Seconds one `pulumi up` may spend following the rollout before failing. @default 3600 */
  readonly deadlineSeconds?: pulumi.Input<number>;
}

/** The connection inputs of a dynamic resource: the context as given, the kubeconfig wrapped as a secret. */
export function connectionInputs(args: ClusterConnectionArgs): { context: ClusterConnectionArgs['context']; kubeconfig: pulumi.Output<string> | undefined } {
  return { context: args.context, kubeconfig: args.kubeconfig === undefined ? undefined : pulumi.secret(args.kubeconfig) };
}

/** The inputs of a resource that follows a rollout, with the defaults filled in (`pollMs` defaults per resource). */
export function followedRolloutInputs(args: FollowedRolloutArgs & { readonly pollMs?: pulumi.Input<number> }, defaultPollMs: number) {
  return {
    apiVersion: args.apiVersion,
    name: args.name,
    namespace: args.namespace,
    deadlineSeconds: args.deadlineSeconds ?? MIGRATION_DEFAULTS.deadlineSeconds,
    pollMs: args.pollMs ?? defaultPollMs,
    ...connectionInputs(args),
  };
}
