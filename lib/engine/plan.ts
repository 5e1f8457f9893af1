/** `plan()`: the dry-run timeline of a RayService upgrade or the rounds of a RoleBasedGroup rollout. */
import { planRayService, type RayServicePlan, type RayServicePlanInput } from './plan-rayservice';
import { planRoleBasedGroup, type RoleBasedGroupPlan, type RoleBasedGroupPlanInput } from './plan-rbg';

/** Anything `plan()` can plan. */
export type PlanInput = RayServicePlanInput | RoleBasedGroupPlanInput;

/** Any plan. */
export type Plan = RayServicePlan | RoleBasedGroupPlan;

/** Plans a RayService upgrade or a RoleBasedGroup rollout, by `input.kind`. */
export function plan(input: RayServicePlanInput): RayServicePlan;
/** Plans a RoleBasedGroup rollout. */
export function plan(input: RoleBasedGroupPlanInput): RoleBasedGroupPlan;
/** Plans either kind. */
export function plan(input: PlanInput): Plan;
export function plan(input: PlanInput): Plan {
  return input.kind === 'RayService' ? planRayService(input) : planRoleBasedGroup(input);
}
