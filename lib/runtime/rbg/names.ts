/**
 * Names the rayshift executor uses on RoleBasedGroups (besides `EXECUTOR_LABEL` and
 * `COORDINATION_ANNOTATION` of lib/spec/rbg, which the constructs write): the status annotation,
 * the Events' reporting controller and the RBG resource types of both API versions.
 */

/** RoleBasedGroup v1alpha2 (RBG ≥ v0.7.0, storage version there). */
export const RBG_V1ALPHA2_TYPE = { apiVersion: 'workloads.x-k8s.io/v1alpha2', kind: 'RoleBasedGroup', plural: 'rolebasedgroups', namespaced: true } as const;
/** RoleBasedGroup v1alpha1 (RBG v0.6.0; deprecated but served by v0.7.0). */
export const RBG_V1ALPHA1_TYPE = { apiVersion: 'workloads.x-k8s.io/v1alpha1', kind: 'RoleBasedGroup', plural: 'rolebasedgroups', namespaced: true } as const;
/** RoleInstanceSet, RBG v1alpha2's default workload of a role (named `<group>-<role>`, owned by the group). */
export const ROLE_INSTANCE_SET_TYPE = { apiVersion: 'workloads.x-k8s.io/v1alpha2', kind: 'RoleInstanceSet', plural: 'roleinstancesets', namespaced: true } as const;
/** Either RoleBasedGroup resource type. */
export type RbgResourceType = typeof RBG_V1ALPHA2_TYPE | typeof RBG_V1ALPHA1_TYPE;

/** `EXECUTOR_LABEL` (lib/spec/rbg) value of groups the operator rolls. */
export const OPERATOR_EXECUTOR = 'operator';
/** Annotation where the executor reports each coordination's progress, as JSON (see `status.ts`). */
export const STATUS_ANNOTATION = 'rayshift.dev/rollout-status';
/** Reporting component of the Events the executor records. */
export const EVENT_CONTROLLER = 'rayshift.dev/rbg-coordinator';
