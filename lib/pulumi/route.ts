/** Pulumi components of weighted Gateway API routes: `HttpRoute` and `GrpcRoute`. */
import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import { Chart } from 'cdk8s';
import { GrpcRoute as GrpcRouteConstruct, GrpcRouteProps, HttpRoute as HttpRouteConstruct, HttpRouteProps } from '../cdk8s/route';
import { ParentReference } from '../spec/gateway';
import { metadataNamed, renderComponentInputs } from './component-children';
import { Gateway } from './gateway';
import { WithInputs } from './inputs';

/**
 * Props of a route component: the construct's (`P`, each a `pulumi.Input`), with parents given as
 * `Gateway` components or references, plus who owns the weights.
 */
export type RouteArgs<P extends HttpRouteProps | GrpcRouteProps> = WithInputs<Omit<P, 'parents'>, 'metadata' | 'hostnames' | 'rules'> & {
  /** Gateways (or listeners) to attach to: components (the route waits for them) or references (a Gateway's name or listener may be an output). */
  readonly parents: readonly (Gateway | pulumi.Input<ParentReference>)[];
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

/** The reference of a `Gateway` component, once its name and namespace resolve. */
const referenceOf = (gateway: Gateway): pulumi.Output<ParentReference> =>
  pulumi.all([gateway.gatewayName, gateway.namespace]).apply(([name, namespace]) => ({ name, ...(namespace !== undefined ? { namespace } : {}) }));

/** Shared body of the two route components; only the construct and the type token differ. */
abstract class RouteComponent<P extends HttpRouteProps | GrpcRouteProps> extends pulumi.ComponentResource {
  /** The route's name in the cluster. */
  public readonly routeName: pulumi.Output<string>;
  /** The `@pulumi/kubernetes` route. */
  public readonly resource: pulumi.Output<k8s.apiextensions.CustomResource>;

  protected constructor(type: string, construct: RouteConstruct<P>, name: string, args: RouteArgs<P>, opts?: pulumi.ComponentResourceOptions) {
    super(type, name, {}, opts);
    // A JavaScript caller may leave `parents` out: the construct's validation then names it.
    const given = Array.isArray(args.parents) ? args.parents : undefined;
    const gateways = (given ?? []).filter((p): p is Gateway => p instanceof Gateway);
    const parents = given?.map((p) => (p instanceof Gateway ? referenceOf(p) : p));
    const { weightsOwnedByMigration, ...props } = args;
    const rendered = renderComponentInputs<P, HttpRouteConstruct | GrpcRouteConstruct>(
      this,
      name,
      { ...props, parents },
      (chart, resolved) => new construct(chart, name, { ...resolved, metadata: metadataNamed(name, resolved.metadata) }),
      {
        dependsOn: gateways,
        childOptions: () => (weightsOwnedByMigration ? { ignoreChanges: MIGRATION_OWNED_ROUTE_PATHS } : {}),
      },
    );
    this.routeName = rendered.apply((r) => r.construct.name);
    this.resource = rendered.apply((r) => r.resources[0]);
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
