import { ApiObjectMetadata } from 'cdk8s';
import { Construct } from 'constructs';
import { BackendReference, ParentReference, PathMatchType, ValueMatchType, validateRoute, validateRouteProps } from '../spec/gateway';
import { GRPCROUTE, HTTPROUTE } from '../spec/object-names';
import { ValidationResult } from '../spec/problem';
import { isObject } from '../spec/read';
import { Gateway } from './gateway';
import { givenProps } from './given-props';
import { GroupVersionKind, ValidatedObject } from './validated-object';

/** A path match (Gateway API `HTTPPathMatch`). */
export interface HttpPathMatch {
  /** How the path is matched. @default "PathPrefix" */
  readonly type?: PathMatchType;
  /** The path. @default "/" */
  readonly value?: string;
}

/** A header or query parameter match (Gateway API `HTTPHeaderMatch`, `HTTPQueryParamMatch`, `GRPCHeaderMatch`). */
export interface NameValueMatch {
  /** How the value is matched. @default "Exact" */
  readonly type?: ValueMatchType;
  /** The header or parameter name. */
  readonly name: string;
  /** The value. */
  readonly value: string;
}

/** A gRPC method match (Gateway API `GRPCMethodMatch`). */
export interface GrpcMethodMatch {
  /** How service and method are matched. @default "Exact" */
  readonly type?: ValueMatchType;
  /** The service, e.g. `llm.Generator`. @default every service */
  readonly service?: string;
  /** The method. @default every method */
  readonly method?: string;
}

/** An HTTP request match: path, headers, method, query parameters (Gateway API `HTTPRouteMatch`). */
export interface HttpRouteMatch {
  /** Path match. @default PathPrefix "/" */
  readonly path?: HttpPathMatch;
  /** Header matches. @default none */
  readonly headers?: NameValueMatch[];
  /** Query parameter matches. @default none */
  readonly queryParams?: NameValueMatch[];
  /** HTTP method. @default every method */
  readonly method?: string;
}

/** A gRPC request match: service/method and headers (Gateway API `GRPCRouteMatch`). */
export interface GrpcRouteMatch {
  /** Method match. @default every method */
  readonly method?: GrpcMethodMatch;
  /** Header matches. @default none */
  readonly headers?: NameValueMatch[];
}

/** What a rule of either route kind has besides its matches: a name, filters and weighted backends. */
export interface RouteRuleOptions {
  /** Rule name, for policies that target one rule; needs Gateway API ≥ v1.4.0 (v1.2.1 rejects it). @default none */
  readonly name?: string;
  /** Filters (header modifiers, mirrors, …) passed through unchanged. @default none */
  readonly filters?: { readonly [key: string]: unknown }[];
  /** Weighted backends. */
  readonly backendRefs: BackendReference[];
}

/** One rule of an `HttpRoute`: matches, filters and weighted backends. */
export interface HttpRouteRule extends RouteRuleOptions {
  /** Matches. @default match everything */
  readonly matches?: HttpRouteMatch[];
}

/** One rule of a `GrpcRoute`: matches, filters and weighted backends. */
export interface GrpcRouteRule extends RouteRuleOptions {
  /** Matches. @default match everything */
  readonly matches?: GrpcRouteMatch[];
}

/** Props of either route kind besides its rules. */
export interface RouteOptions {
  /** Object metadata. @default a generated name */
  readonly metadata?: ApiObjectMetadata;
  /** Gateways (or listeners) to attach to: constructs or references. */
  readonly parents: (Gateway | ParentReference)[];
  /** Host names the route serves. @default every host of the listener */
  readonly hostnames?: string[];
}

/** Props of an `HttpRoute`. */
export interface HttpRouteProps extends RouteOptions {
  /** Rules. */
  readonly rules: HttpRouteRule[];
}

/** Props of a `GrpcRoute`. */
export interface GrpcRouteProps extends RouteOptions {
  /** Rules. */
  readonly rules: GrpcRouteRule[];
}

function parentOf(gateway: Gateway): ParentReference {
  const namespace = gateway.apiObject.metadata.namespace;
  return { name: gateway.name, ...(namespace !== undefined ? { namespace } : {}) };
}

/** What `HttpRoute` and `GrpcRoute` share: everything but the kind and the type of their matches. */
export abstract class RouteBase extends ValidatedObject {
  readonly #options: RouteOptions;
  readonly #rules: RouteRuleOptions[];

  protected constructor(scope: Construct, id: string, gvk: GroupVersionKind, options: RouteOptions, rules: RouteRuleOptions[]) {
    super(scope, id, { ...gvk, metadata: options.metadata });
    this.#options = options;
    this.#rules = rules;
  }

  /** The rules as given, of either kind (a copy; empty when a JavaScript or Python caller left them out). */
  protected givenRules(): RouteRuleOptions[] {
    return Array.isArray(this.#rules) ? [...this.#rules] : [];
  }

  protected renderSpec(): any {
    const o = this.#options;
    // `parents` and `rules` are required, but a JavaScript or Python caller may leave them out:
    // they are then left out of the manifest, and validation names the missing prop. A rule that
    // is not a mapping is written as given, for the same reason.
    return {
      ...(Array.isArray(o.parents) ? { parentRefs: o.parents.map((p) => (p instanceof Gateway ? parentOf(p) : p)) } : {}),
      ...(o.hostnames !== undefined ? { hostnames: o.hostnames } : {}),
      ...(Array.isArray(this.#rules)
        ? {
            rules: this.#rules.map((r) => {
              if (!isObject(r)) return r;
              const matches = (r as HttpRouteRule | GrpcRouteRule).matches;
              return {
                ...(r.name !== undefined ? { name: r.name } : {}),
                ...(matches !== undefined ? { matches } : {}),
                ...(r.filters !== undefined ? { filters: r.filters } : {}),
                backendRefs: r.backendRefs,
              };
            }),
          }
        : {}),
    };
  }

  protected validateManifest(manifest: unknown): ValidationResult {
    const result = validateRoute(manifest);
    const props = validateRouteProps(this.#options.parents, this.#rules);
    // Without `parents` the props' error says it all; the spec's "no parent Gateway" warning would repeat it.
    const warnings = props.errors.some((e) => e.path === 'parents') ? result.warnings.filter((w) => w.path !== 'spec.parentRefs') : result.warnings;
    return { errors: [...props.errors, ...result.errors], warnings };
  }
}

/** An HTTPRoute with weighted backends, for shared Gateways and routes that rayshift's executors or the user own. */
export class HttpRoute extends RouteBase {
  constructor(scope: Construct, id: string, props: HttpRouteProps) {
    super(scope, id, HTTPROUTE, givenProps(props), props?.rules);
  }

  /** The rules, as given (a copy). */
  public get rules(): HttpRouteRule[] {
    return this.givenRules() as HttpRouteRule[];
  }
}

/** A GRPCRoute with weighted backends, for gRPC Serve applications. */
export class GrpcRoute extends RouteBase {
  constructor(scope: Construct, id: string, props: GrpcRouteProps) {
    super(scope, id, GRPCROUTE, givenProps(props), props?.rules);
  }

  /** The rules, as given (a copy). */
  public get rules(): GrpcRouteRule[] {
    return this.givenRules() as GrpcRouteRule[];
  }
}
