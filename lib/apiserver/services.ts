/** The services the API server serves and their implementations, shared by the Connect router and the REST transcoder. */
import type { DescService } from '@bufbuild/protobuf';
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import { ClusterService } from './gen/rayshift/v1/cluster_pb';
import { ComputeTemplateService } from './gen/rayshift/v1/compute_template_pb';
import { IdentityService } from './gen/rayshift/v1/identity_pb';
import { RayServiceService } from './gen/rayshift/v1/rayservice_service_pb';
import { RoleBasedGroupService } from './gen/rayshift/v1/rolebasedgroup_pb';
import { clusters } from './handlers/cluster';
import { computeTemplates } from './handlers/compute-template';
import type { HandlerDeps } from './handlers/deps';
import { identity } from './handlers/identity';
import { rayServiceCrud } from './handlers/rayservice-crud';
import { rayServiceEvents } from './handlers/rayservice-events';
import { rayServiceRevisions } from './handlers/rayservice-revisions';
import { rayServiceSteering } from './handlers/rayservice-steering';
import { UpgradeHandlerOptions, rayServiceUpgrade } from './handlers/rayservice-upgrade';
import { roleBasedGroups } from './handlers/rolebasedgroup';

/** Every service of the core API. */
export const API_SERVICES: readonly DescService[] = [RayServiceService, ClusterService, ComputeTemplateService, RoleBasedGroupService, IdentityService];

/** A method implementation called the way the REST transcoder calls it. */
export type AnyMethodImpl = (request: unknown, context: HandlerContext) => unknown;

/** A service and its implementation. */
export interface ServiceBinding {
  readonly service: DescService;
  readonly impl: Record<string, AnyMethodImpl>;
}

function bind<S extends DescService>(service: S, impl: ServiceImpl<S>): ServiceBinding {
  return { service, impl: impl as unknown as Record<string, AnyMethodImpl> };
}

/** The implementation of every service. */
export function serviceBindings(deps: HandlerDeps, opts: UpgradeHandlerOptions = {}): ServiceBinding[] {
  return [
    bind(RayServiceService, { ...rayServiceCrud(deps), ...rayServiceUpgrade(opts), ...rayServiceSteering(), ...rayServiceEvents(), ...rayServiceRevisions() }),
    bind(ClusterService, clusters(deps)),
    bind(ComputeTemplateService, computeTemplates()),
    bind(RoleBasedGroupService, roleBasedGroups()),
    bind(IdentityService, identity()),
  ];
}
