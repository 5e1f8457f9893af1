/**
 * The rayshift core API: the server (`startApiServer`), the typed client (`createApiClient`) and the
 * generated messages and service descriptors of `proto/rayshift/v1`.
 */
export { createApiClient } from './client';
export type { ApiClient, ApiClientOptions, ApiProtocol } from './client';
export { startApiServer } from './server';
export type { ApiServerOptions, RunningApiServer } from './server';
export * from './gen/rayshift/v1/common_pb';
export * from './gen/rayshift/v1/rayservice_pb';
export * from './gen/rayshift/v1/rayservice_service_pb';
export * from './gen/rayshift/v1/upgrade_pb';
export * from './gen/rayshift/v1/cluster_pb';
export * from './gen/rayshift/v1/compute_template_pb';
export * from './gen/rayshift/v1/rolebasedgroup_pb';
export * from './gen/rayshift/v1/identity_pb';
