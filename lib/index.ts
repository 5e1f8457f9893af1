/**
 * rayshift: typed infrastructure-as-code for serving models on Ray and RoleBasedGroup.
 *
 * This entry point (`rayshift`) is the model (types, defaults, validation), the cdk8s constructs
 * and `plan()`. The Pulumi components are `rayshift/pulumi`; the operator's install chart is
 * `rayshift/operator`. Nothing else in the package is public.
 */
export * from './spec';
export * from './cdk8s';
export { plan, planRayService, planRoleBasedGroup } from './engine';
export type {
  Plan,
  PlanInput,
  RayServicePlan,
  RayServicePlanInput,
  RayServicePlanStep,
  RoleBasedGroupPlan,
  RoleBasedGroupPlanInput,
  RbgPlanRole,
  RbgPlanRound,
  RbgCoordination,
} from './engine';
export { rbgPlanInputs } from './engine/from-spec';
