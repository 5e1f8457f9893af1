/** Pulumi components of weighted Gateway API routes: `HttpRoute` and `GrpcRoute`. */
import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import { Chart } from 'cdk8s';
import { GrpcRoute as GrpcRouteConstruct, GrpcRouteProps, HttpRoute as HttpRouteConstruct, HttpRouteProps } from '../cdk8s/route';
import { ParentReference } from '../spec/gateway';
import { metadataNamed, renderComponent } from './component-children';
import { Gateway } from './gateway';

/**
 * Props of a route component: the construct's (`P`), with parents given as `Gateway` components or
 * references, plus who owns the weights.
 */
export type RouteArgs<P extends HttpRouteProps | GrpcRouteProps> = Omit<P, 'parents'> & {
  /** Gateways (or listeners) to attach to: components (the route waits for them) or references. */
  readonly parents: readonly (Gateway | ParentReference)[];
  /**
   * A rayshift executor (the operator, or the Pulumi executor of a RayService with
   * `rayshift.gatewayRef`) moves this route's backend weights during upgrades. Pulumi then
   * creates the rules once and ignores `spec.rules` afterwards (the list is atomic under
   * server-side apply, so it has exactly one owner): a later `pulumi up` neither conflicts with
   * the executor nor resets its weights. @default false (Pulumi owns the rules)
   */
  readonly weightsOwnedByMigration?: boolean;
};

/** The path of the rules a migration owns: the whole list, which Gateway API declares atomic. */
export const MIGRATION_OWNED_ROUTE_PATHS = ['spec.rules'] as const;

type RouteConstruct<P> = new (scope: Chart, id: string, props: P) => HttpRouteConstruct | GrpcRouteConstruct;

/** Shared body of the two route components; only the construct and the type token differ. */
abstract class RouteComponent<P extends HttpRouteProps | GrpcRouteProps> extends pulumi.ComponentResource {
  /** The route's name in the cluster. */
  public readonly routeName: string;
  /** The `@pulumi/kubernetes` route. */
  public readonly resource: k8s.apiextensions.CustomResource;

  protected constructor(type: string, construct: RouteConstruct<P>, name: string, args: RouteArgs<P>, opts?: pulumi.ComponentResourceOptions) {
    super(type, name, {}, opts);
    // A JavaScript caller may leave `parents` out: the construct's validation then names it.
    const given = Array.isArray(args.parents) ? args.parents : undefined;
    const gateways = (given ?? []).filter((p): p is Gateway => p instanceof Gateway);
    const parents = given?.map((p) => (p instanceof Gateway ? { name: p.gatewayName, ...(p.namespace !== undefined ? { namespace: p.namespace } : {}) } : p));
    const { construct: route, resources } = renderComponent(
      this,
      name,
      (chart) => new construct(chart, name, { ...args, parents, metadata: metadataNamed(name, args.metadata) } as P),
      {
        dependsOn: gateways,
        childOptions: () => (args.weightsOwnedByMigration ? { ignoreChanges: MIGRATION_OWNED_ROUTE_PATHS } : {}),
      },
    );
    this.routeName = route.name;
    this.resource = resources[0];
    this.registerOutputs({ routeName: this.routeName });
  }
}

/** An HTTPRoute with weighted backends (type `rayshift:index:HttpRoute`). */
export class HttpRoute extends RouteComponent<HttpRouteProps> {
  constructor(name: string, args: RouteArgs<HttpRouteProps>, opts?: pulumi.ComponentResourceOptions) {
    super('rayshift:index:HttpRoute', HttpRouteConstruct, name, args, opts);
  }
}

/** A GRPCRoute with weighted backends (type `rayshift:index:GrpcRoute`). */
export class GrpcRoute extends RouteComponent<GrpcRouteProps> {
  constructor(name: string, args: RouteArgs<GrpcRouteProps>, opts?: pulumi.ComponentResourceOptions) {
    super('rayshift:index:GrpcRoute', GrpcRouteConstruct, name, args, opts);
  }
}
