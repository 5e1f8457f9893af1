/**
 * The REST JSON shapes the dashboard reads, generated from `proto/` (type-only imports: nothing of
 * the generated code ends up in the bundle), and the steering verbs.
 */
export type { WhoAmIResponseJson } from '../../lib/apiserver/gen/rayshift/v1/identity_pb';
export type { RayServiceJson } from '../../lib/apiserver/gen/rayshift/v1/rayservice_pb';
export type { RoleBasedGroupJson } from '../../lib/apiserver/gen/rayshift/v1/rolebasedgroup_pb';
export type { RayServiceEventJson } from '../../lib/apiserver/gen/rayshift/v1/rayservice_service_pb';
export type {
  AnalysisMetricStatusJson,
  AnalysisRunJson,
  AnalysisVerdictJson,
  ClusterSideJson,
  UpgradeAnalysisJson,
  UpgradeEventJson,
  UpgradePlanJson,
  UpgradeStatusJson,
} from '../../lib/apiserver/gen/rayshift/v1/upgrade_pb';

/** The steering verbs, in the order the page shows them, each also its RBAC subresource (one home: the steering rules). */
export { STEERING_VERBS, type SteeringVerb } from '../../lib/engine/steering';
