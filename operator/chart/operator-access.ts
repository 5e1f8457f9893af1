/**
 * Every Kubernetes API call the rayshift operator makes, as `{group, resource, subresource, verbs}`
 * with the code that makes it: the one table the chart's ClusterRole and Role are generated from
 * (`operatorClusterRules`, `operatorNamespaceRules`) and that the audit test
 * (test/integration/cluster-operator-rbac-audit.test.ts) checks against what kube-apiserver's audit
 * log shows the operator's identity doing. A verb is here because a line of `lib/runtime` or
 * `operator/` sends it; a change to those calls changes this table, or the audit test fails.
 *
 * Discovery (`GET /api/v1`, `/apis/<group>/<version>`: the REST mapper and the RBG controller's
 * "is this kind served" probe) is a non-resource URL every authenticated identity may read
 * (`system:discovery`), so it needs no rule and is not listed.
 */

/** A Kubernetes API verb as RBAC and the audit log name it. */
export type ApiVerb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete';

/** Calls made only when an option of the chart says the operator needs them. */
export type AccessCondition = 'rayTokenAuth' | 'shards';

/** One resource the operator reaches, with the verbs it sends and where. */
export interface ApiAccess {
  /** API group (`''` for the core group). */
  readonly group: string;
  /** Resource (plural). */
  readonly resource: string;
  /** Subresource (`status`, `finalizers`), if any. */
  readonly subresource?: string;
  /** Verbs the code sends. */
  readonly verbs: readonly ApiVerb[];
  /** Cluster-wide (RayServices live in any namespace) or only in the operator's own namespace. */
  readonly scope: 'cluster' | 'operator-namespace';
  /** Names the verbs are limited to: the operator's Lease; Secrets named by the chart's `rayTokenAuth`. */
  readonly resourceNames?: 'lease' | 'rayTokenAuthSecrets';
  /** Only granted when this chart option is set. */
  readonly only?: AccessCondition;
  /**
   * `admission`: no request of the operator's, but an authorization kube-apiserver checks for it
   * when it creates an object (OwnerReferencesPermissionEnforcement: `blockOwnerDeletion` on an
   * ownerReference needs `update` on the owner's `finalizers`), so it never shows in the audit log
   * as the operator's request; a missing grant shows there as a refused create.
   */
  readonly checkedBy?: 'admission';
  /** The code that sends it (file: function). */
  readonly by: string;
  /** Why the operator needs exactly these verbs (the chart's justification). */
  readonly why: string;
}

/** The table. Order is the order of the chart's rules. */
export const OPERATOR_API_ACCESS: readonly ApiAccess[] = [
  // RayService executor (operator/operator.ts, lib/runtime/rayservice).
  {
    group: 'rayshift.dev', resource: 'rayservices', verbs: ['list', 'watch', 'patch'], scope: 'cluster',
    by: 'operator/operator.ts: Informer; lib/runtime/rayservice/store.ts: patchMetadata (JSON patch of finalizers and spent steering annotations)',
    why: 'watch the RayServices it executes; patch adds and removes its finalizer and clears spent steering annotations (never the spec)',
  },
  {
    group: 'rayshift.dev', resource: 'rayservices', subresource: 'status', verbs: ['patch'], scope: 'cluster',
    by: 'lib/runtime/rayservice/store.ts: writeStatus (server-side apply of the status subresource)',
    why: 'write status (phase, weights, capacities, conditions) through the status subresource',
  },
  {
    group: 'rayshift.dev', resource: 'rayservices', subresource: 'finalizers', verbs: ['update'], scope: 'cluster', checkedBy: 'admission',
    by: 'lib/runtime/rayservice/resources.ts: controllerRef (blockOwnerDeletion on what a RayService owns)',
    why: 'own RayClusters, Services, Gateways and routes with blockOwnerDeletion ownerReferences',
  },
  {
    group: 'ray.io', resource: 'rayclusters', verbs: ['create', 'get', 'list', 'watch', 'patch', 'delete'], scope: 'cluster',
    by: 'lib/runtime/rayservice/execute.ts: createPendingCluster (create-if-absent), ensureServeService (get outside the operator), putServeConfig (merge patch of the applied-config annotation), deleteCluster; observe.ts: list when the cache lags; operator.ts: Informer',
    why: 'create the pending RayCluster, record the Serve config it was sent, delete retired clusters after rayClusterDeletionDelaySeconds',
  },
  {
    group: 'ray.io', resource: 'rayclusters', subresource: 'finalizers', verbs: ['update'], scope: 'cluster', checkedBy: 'admission',
    by: 'lib/runtime/rayservice/resources.ts: buildPerClusterServeService (owned by its RayCluster with blockOwnerDeletion)',
    why: 'own the per-cluster serve Services with blockOwnerDeletion ownerReferences to their RayClusters',
  },
  {
    group: '', resource: 'services', verbs: ['create', 'get', 'list', 'watch', 'patch', 'delete'], scope: 'cluster',
    by: 'lib/runtime/rayservice/execute.ts: ensureServeService (get outside the operator, then create), promote (server-side apply of the stable Services), deleteCluster; operator.ts: Informer',
    why: 'create per-cluster serve Services (route backends), apply the head/serve Services on promotion, delete a retired cluster\'s',
  },
  {
    group: '', resource: 'pods', verbs: ['list', 'watch', 'patch'], scope: 'cluster',
    by: 'lib/runtime/rayservice/head-serve-label.ts: labelHeadPods (merge patch of one label, the setHeadServeLabel step); operator.ts: Informer of head Pods; lib/runtime/capacity.ts: listCapacity (bound Pods, spec.nodeName!=); lib/runtime/rayservice/observe.ts: observeSurge (the pending cluster\'s Pods); lib/runtime/rbg/statefulset-replicas.ts: readStatefulSetReplicas (a StatefulSet role\'s Pods, by its selector); lib/runtime/rbg/router-route.ts: observeRouterRoutes (a routed group\'s Pods, by RBG\'s group label)',
    why: 'keep the ray.io/serve label of head Pods (the chart\'s ValidatingAdmissionPolicy refuses any other change of a Pod by the operator); count the requests already bound to each node before an upgrade or a RoleBasedGroup rollout\'s first round; read which of the new cluster\'s Pods the scheduler marks Unschedulable; count a StatefulSet role\'s replicas per ordinal and revision on the way back of a rollout (RBG v0.6.0 reports no updated-and-ready replicas); count a routed role\'s ready Pods per release, which its router can reach (RBG v0.7.0 counts a replica updated and ready before its Pod is replaced)',
  },
  {
    group: '', resource: 'pods', verbs: ['delete'], scope: 'cluster',
    by: 'lib/runtime/rbg/return-replicas.ts: returnReplicas (a rollback round of a role run as a StatefulSet, uid-guarded)',
    why: 'replace the Pods of a rolled-back StatefulSet role (RBG v0.6.0, v1alpha1) that run the abandoned revision below the partition the round wrote (the StatefulSet recreates them from the revision before the rollout)',
  },
  {
    group: '', resource: 'nodes', verbs: ['list'], scope: 'cluster',
    by: 'lib/runtime/capacity.ts: listCapacity (the capacity preflight, only when a pass would start an upgrade or release a RoleBasedGroup rollout\'s first round)',
    why: 'read node labels, taints and allocatable resources to tell whether an upgrade\'s new Pods (or a rollout\'s first round) fit before creating them',
  },
  ...(['resourcequotas', 'limitranges'] as const).map((resource): ApiAccess => ({
    group: '', resource, verbs: ['list'], scope: 'cluster',
    by: 'lib/runtime/capacity.ts: listCapacity (the capacity preflight, in the RayService\'s or RoleBasedGroup\'s namespace)',
    why: resource === 'resourcequotas' ? 'honour the namespace\'s quota (requests.nvidia.com/gpu, cpu, memory, pods) in the capacity preflight' : 'apply the namespace\'s default container requests in the capacity preflight',
  })),
  {
    group: 'discovery.k8s.io', resource: 'endpointslices', verbs: ['list', 'watch'], scope: 'cluster',
    by: 'operator/operator.ts: Informer (read by lib/runtime/rayservice/serve-endpoints.ts)',
    why: 'count the ready endpoints of each cluster\'s serve Service before routing traffic to it',
  },
  {
    group: 'gateway.networking.k8s.io', resource: 'gateways', verbs: ['create', 'list', 'watch'], scope: 'cluster',
    by: 'lib/runtime/rayservice/execute.ts: ensureGateway (creates <name>-gateway without gatewayRef); operator.ts: Informer (conditions read from it)',
    why: 'create the Gateway when there is no gatewayRef, and watch its conditions before each traffic step',
  },
  ...(['httproutes', 'grpcroutes'] as const).map((resource): ApiAccess => ({
    group: 'gateway.networking.k8s.io', resource, verbs: ['create', 'get', 'list', 'watch', 'patch'], scope: 'cluster',
    by: `lib/runtime/rayservice/execute.ts: createRoute, patchRouteWeights (JSON patch of backend weights guarded by test ops; get to re-read after a failed guard); operator.ts: Informer${resource === 'httproutes' ? '; lib/runtime/rbg/router-route.ts: observeRouterRoutes (get), writeRouterWeights (the same guarded weight patch); operator/rbg-controller.ts: Informer of router routes (labelled rayshift.dev/router-for)' : ''}`,
    why: `create the route, JSON-patch the managed backend weights (re-reading it when a guard fails), watch its conditions${resource === 'httproutes' ? '; read, weight and watch a RoleBasedGroup router route between the releases\' routers (a re-applied route is corrected on its own event)' : ''}`,
  })),
  {
    group: '', resource: 'secrets', verbs: ['get'], scope: 'cluster', resourceNames: 'rayTokenAuthSecrets', only: 'rayTokenAuth',
    by: 'lib/runtime/serve/kuberay-token.ts: kubeRayTokenSource (spec.rayClusterConfig.authOptions.secretName)',
    why: 'read the Ray dashboard token Secrets named in the chart (clusters with authOptions.mode token and that secretName)',
  },
  // RoleBasedGroup coordinated-rollout executor (operator/rbg-controller.ts, lib/runtime/rbg).
  {
    group: 'workloads.x-k8s.io', resource: 'rolebasedgroups', verbs: ['get', 'list', 'watch', 'patch'], scope: 'cluster',
    by: 'lib/runtime/rbg/reconciler.ts: reconcile (get, then one resourceVersion-guarded JSON patch per round); operator/rbg-controller.ts: Informer',
    why: 'watch the RoleBasedGroups it executes and patch each coordinated role\'s partition, maxUnavailable and paused, and the rollout-status annotation',
  },
  {
    group: 'workloads.x-k8s.io', resource: 'rolebasedgroupwarmups', verbs: ['get', 'list', 'watch', 'create'], scope: 'cluster',
    by: 'lib/runtime/rbg/reconciler.ts: warmupGate (RBG v0.8); operator/rbg-controller.ts: Informer',
    why: 'create the warmup of a new revision before its coordinated rollout and watch its status (RBG\'s controller runs and deletes it)',
  },
  {
    group: 'workloads.x-k8s.io', resource: 'roleinstancesets', verbs: ['get', 'list', 'watch'], scope: 'cluster',
    by: 'lib/runtime/rbg/reconciler.ts: workloadStatuses (v1alpha2 roles); operator/rbg-controller.ts: Informer',
    why: 'read and watch the progress of coordinated roles run as roleinstancesets where the RoleBasedGroup status is stale',
  },
  {
    group: 'workloads.x-k8s.io', resource: 'roleinstances', verbs: ['list', 'delete', 'update'], scope: 'cluster',
    by: 'lib/runtime/rbg/return-replicas.ts: returnReplicas (a rollback round: uid-guarded delete; on RBG v0.8 a resourceVersion-guarded update); lib/runtime/rbg/stranded-replicas.ts: roleInstanceReplicas, replaceStranded (uid-guarded delete)',
    why: 'replace the replicas of a rolled-back role that run the abandoned revision below the partition the round wrote (its roleinstanceset recreates them from the revision before the rollout); on RBG v0.8, whose webhook refuses a partition at replicas, revert the last ordinals in place to that revision; replace the replicas a roleinstanceset will never update (left on a revision its template no longer names)',
  },
  {
    group: 'apps', resource: 'controllerrevisions', verbs: ['get'], scope: 'cluster',
    by: 'lib/runtime/rbg/return-replicas.ts: revisionTemplate (a rollback round on RBG v0.8)',
    why: 'read the template of the revision before the rollout from its roleinstanceset\'s ControllerRevision, to revert a RoleInstance in place',
  },
  {
    group: 'apps', resource: 'statefulsets', verbs: ['get', 'list', 'watch', 'patch'], scope: 'cluster',
    by: 'lib/runtime/rbg/reconciler.ts: workloadStatuses (v1alpha1 roles); operator/rbg-controller.ts: Informer (v1alpha1 groups); lib/runtime/rbg/carry-partition.ts: carryPartitions (a JSON patch of the partition, guarded by a test of its value)',
    why: 'read and watch the progress of coordinated roles run as statefulsets where the RoleBasedGroup status is stale, and carry a round\'s partition into a StatefulSet that RBG v0.6.0 reset to its replicas',
  },
  {
    group: 'apps', resource: 'deployments', verbs: ['list', 'watch'], scope: 'cluster',
    by: 'lib/runtime/rbg/router-route.ts: observeRouterRoutes (list of the rule\'s router Deployments, labelled rayshift.dev/router-for and router-rule); operator/rbg-controller.ts: Informer of router Deployments (labelled rayshift.dev/router-for)',
    why: 'read the replicas and readiness of a routed rule\'s router Deployments: the old release\'s is scaled to 0 after its rollout, and weight moves to a scaled-back router only once it is ready',
  },
  {
    group: 'apps', resource: 'deployments', subresource: 'scale', verbs: ['patch'], scope: 'cluster',
    by: 'lib/runtime/rbg/router-route.ts: scaleRouter (JSON patch of the Scale\'s replicas, guarded by a test of their value)',
    why: 'scale the old release\'s router Deployment to 0 once a routed rollout is complete, and back before weight moves to it; through the scale subresource, so GitOps tools can ignore /spec/replicas',
  },
  {
    group: 'leaderworkerset.x-k8s.io', resource: 'leaderworkersets', verbs: ['get'], scope: 'cluster',
    by: 'lib/runtime/rbg/reconciler.ts: workloadStatuses (v1alpha1 roles)',
    why: 'read the progress of coordinated roles run as leaderworkersets where the RoleBasedGroup status is stale',
  },
  {
    group: 'events.k8s.io', resource: 'events', verbs: ['create'], scope: 'cluster',
    by: 'lib/runtime/kube/events.ts: recordEvents (RBG rounds and deadlines, analysis verdicts)',
    why: 'record an Event for each coordinated round, deadline and analysis verdict',
  },
  // Leader election (lib/runtime/kube/leader-election.ts), in the operator's namespace.
  {
    group: 'coordination.k8s.io', resource: 'leases', verbs: ['create'], scope: 'operator-namespace',
    by: 'lib/runtime/kube/leader-election.ts: tryAcquireOrRenew (the first replica)',
    why: 'create the leader-election Lease the first time (create cannot be limited by name)',
  },
  {
    group: 'coordination.k8s.io', resource: 'leases', verbs: ['get', 'update'], scope: 'operator-namespace', resourceNames: 'lease',
    by: 'lib/runtime/kube/leader-election.ts: tryAcquireOrRenew, release (resourceVersion-guarded replaces)',
    why: 'acquire, renew and release leadership of its own Lease',
  },
  // Sharding (lib/runtime/kube/shard-leases.ts), in the operator's namespace, when the chart's `shards` is above 1.
  {
    group: 'coordination.k8s.io', resource: 'leases', verbs: ['list', 'update'], scope: 'operator-namespace', only: 'shards',
    by: 'lib/runtime/kube/shard-leases.ts: list (by the lease-of label), hold, release (resourceVersion-guarded replaces)',
    why: 'read the sharded operator\'s Leases in one list and take, renew and release its shard Leases and its replica\'s member Lease, named after the Pod (not known in advance, so not limited by name)',
  },
];

/** The access the chart grants with `options`: the table without what an unset option leaves out. */
export function grantedAccess(options: { rayTokenAuth?: boolean; shards?: boolean } = {}): ApiAccess[] {
  return OPERATOR_API_ACCESS.filter((a) => a.only === undefined || options[a.only] === true);
}

/** `group/resource[/subresource]`, as RBAC rules and the audit log's objectRef name a resource. */
export function accessResource(a: Pick<ApiAccess, 'resource' | 'subresource'>): string {
  return a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
}
