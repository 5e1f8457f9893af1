/** Ray dashboard Serve REST client, capacity rounding and readiness (the Ray side of `lib/runtime`). */
export {
  DEFAULT_SERVE_TIMEOUT_MS,
  RAY_AUTH_HEADER,
  SERVE_APPLICATIONS_PATH,
  ServeDashboardClient,
  buildServeDeployBody,
} from './client';
export type { ServeDashboardClientOptions, ServeDeployBody, ServeRequestOptions, TokenSource } from './client';
export { capacityAdjustedReplicas } from './capacity';
export { ServeApiError } from './errors';
export type { ClusterRef, ServeApiErrorInit, ServeApiErrorKind } from './errors';
export { evaluateCapacityReadiness, observeServe, runningReplicas } from './readiness';
export type { CapacityExpectation, CapacityReadiness, ServeObservation } from './readiness';
export { DEFAULT_DASHBOARD_PORT, defaultDashboardResolver } from './resolver';
export type { DashboardResolver, DefaultDashboardResolverOptions } from './resolver';
export { ServeShapeError, parseServeInstanceDetails } from './types';
export type {
  ServeApplicationDetails,
  ServeApplicationStatus,
  ServeDeploymentDetails,
  ServeDeploymentStatus,
  ServeInstanceDetails,
  ServeProxyDetails,
  ServeProxyStatus,
  ServeReplicaDetails,
  ServeReplicaState,
} from './types';
export { KUBERAY_TOKEN_KEY, kubeRayTokenSource } from './kuberay-token';
export type { KubeRayTokenSourceOptions } from './kuberay-token';
