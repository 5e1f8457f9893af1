import { ApiObjectMetadata } from 'cdk8s';
import { Construct } from 'constructs';
import { GrpcRoute as GatewayApiGrpcRoute, HttpRoute as GatewayApiHttpRoute } from '../../imports/gateway-gateway.networking.k8s.io';
import { BackendReference, ParentReference, validateRoute } from '../spec/gateway';
import { Gateway } from './gateway';
import { GroupVersionKind, ValidatedObject } from './validated-object';

/** An HTTP request match: path, headers, method, query parameters (Gateway API `HTTPRouteMatch`). */
export interface HttpRouteMatch {
  /** Path match. @default PathPrefix "/" */
  readonly path?: { readonly type?: 'Exact' | 'PathPrefix' | 'RegularExpression'; readonly value?: string };
  /** Header matches. */
  readonly headers?: readonly { readonly type?: 'Exact' | 'RegularExpression'; readonly name: string; readonly value: string }[];
  /** Query parameter matches. */
  readonly queryParams?: readonly { readonly type?: 'Exact' | 'RegularExpression'; readonly name: string; readonly value: string }[];
  /** HTTP method. */
  readonly method?: string;
}

/** A gRPC request match: service/method and headers (Gateway API `GRPCRouteMatch`). */
export interface GrpcRouteMatch {
  /** Method match. @default every method */
  readonly method?: { readonly type?: 'Exact' | 'RegularExpression'; readonly service?: string; readonly method?: string };
  /** Header matches. */
  readonly headers?: readonly { readonly type?: 'Exact' | 'RegularExpression'; readonly name: string; readonly value: string }[];
}

/** One rule of a route: matches, filters and weighted backends. */
export interface RouteRule<M> {
  /** Rule name, for policies that target one rule; needs Gateway API ≥ v1.4.0 (v1.2.1 rejects it). @default none */
  readonly name?: string;
  /** Matches. @default match everything */
  readonly matches?: readonly M[];
  /** Filters (header modifiers, mirrors, …) passed through unchanged. @default none */
  readonly filters?: readonly { readonly [key: string]: unknown }[];
  /** Weighted backends. */
  readonly backendRefs: readonly BackendReference[];
}

/** Props shared by `HttpRoute` and `GrpcRoute`. */
export interface RouteProps<M> {
  /** Object metadata. @default a generated name */
  readonly metadata?: ApiObjectMetadata;
  /** Gateways (or listeners) to attach to: constructs or references. */
  readonly parents: readonly (Gateway | ParentReference)[];
  /** Host names the route serves. @default every host of the listener */
  readonly hostnames?: readonly string[];
  /** Rules. */
  readonly rules: readonly RouteRule<M>[];
}

/** Shared shape of the two route kinds; only the match type and the kind differ. */
abstract class Route<M> extends ValidatedObject {
  /** The rules, as given. */
  public readonly rules: readonly RouteRule<M>[];

  protected constructor(scope: Construct, id: string, gvk: GroupVersionKind, props: RouteProps<M>) {
    super(scope, id, {
      ...gvk,
      metadata: props.metadata,
      spec: () => ({
        parentRefs: props.parents.map((p) => (p instanceof Gateway ? parentOf(p) : p)),
        ...(props.hostnames !== undefined ? { hostnames: props.hostnames } : {}),
        rules: props.rules.map((r) => ({
          ...(r.name !== undefined ? { name: r.name } : {}),
          ...(r.matches !== undefined ? { matches: r.matches } : {}),
          ...(r.filters !== undefined ? { filters: r.filters } : {}),
          backendRefs: r.backendRefs,
        })),
      }),
      validate: validateRoute,
    });
    this.rules = props.rules;
  }
}

function parentOf(gateway: Gateway): ParentReference {
  const namespace = gateway.apiObject.metadata.namespace;
  return { name: gateway.name, ...(namespace !== undefined ? { namespace } : {}) };
}

/** An HTTPRoute with weighted backends, for shared Gateways and routes that rayshift's executors or the user own. */
export class HttpRoute extends Route<HttpRouteMatch> {
  constructor(scope: Construct, id: string, props: RouteProps<HttpRouteMatch>) {
    super(scope, id, GatewayApiHttpRoute.GVK, props);
  }
}

/** A GRPCRoute with weighted backends, for gRPC Serve applications. */
export class GrpcRoute extends Route<GrpcRouteMatch> {
  constructor(scope: Construct, id: string, props: RouteProps<GrpcRouteMatch>) {
    super(scope, id, GatewayApiGrpcRoute.GVK, props);
  }
}
