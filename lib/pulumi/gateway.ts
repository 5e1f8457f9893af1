/** Pulumi components of the Gateway API entry points: `GatewayClass` and `Gateway`. */
import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import { Gateway as GatewayConstruct, GatewayClass as GatewayClassConstruct, GatewayClassProps, GatewayProps as ConstructGatewayProps } from '../cdk8s/gateway';
import { metadataNamed, renderComponentInputs } from './component-children';
import { WithInputs } from './inputs';

/** Props of the `GatewayClass` component: those of the cdk8s construct, each a `pulumi.Input`. */
export type GatewayClassArgs = WithInputs<GatewayClassProps, keyof GatewayClassProps>;

/** A cluster-scoped GatewayClass (type `rayshift:index:GatewayClass`), validated by the model. */
export class GatewayClass extends pulumi.ComponentResource {
  /** The class name in the cluster. */
  public readonly className: pulumi.Output<string>;
  /** The `@pulumi/kubernetes` GatewayClass. */
  public readonly resource: pulumi.Output<k8s.apiextensions.CustomResource>;

  constructor(name: string, args: GatewayClassArgs, opts?: pulumi.ComponentResourceOptions) {
    super('rayshift:index:GatewayClass', name, {}, opts);
    const rendered = renderComponentInputs<GatewayClassProps, GatewayClassConstruct>(this, name, args, (chart, props) => new GatewayClassConstruct(chart, name, { ...props, metadata: metadataNamed(name, props.metadata) }));
    this.className = rendered.apply((r) => r.construct.name);
    this.resource = rendered.apply((r) => r.resources[0]);
    this.registerOutputs({ className: this.className });
  }
}

/** Props of the `Gateway` component: the construct's, each a `pulumi.Input`, with the class given as a name or a `GatewayClass` component. */
export type GatewayArgs = WithInputs<Omit<ConstructGatewayProps, 'gatewayClass'>, Exclude<keyof ConstructGatewayProps, 'gatewayClass'>> & {
  /** The GatewayClass: a component (the Gateway waits for it) or its name. */
  readonly gatewayClass: GatewayClass | pulumi.Input<string>;
};

/** A Gateway (type `rayshift:index:Gateway`) whose routes split traffic between Ray clusters. */
export class Gateway extends pulumi.ComponentResource {
  /** The Gateway's name in the cluster. */
  public readonly gatewayName: pulumi.Output<string>;
  /** The Gateway's namespace, when given. */
  public readonly namespace: pulumi.Output<string | undefined>;
  /** The `@pulumi/kubernetes` Gateway. */
  public readonly resource: pulumi.Output<k8s.apiextensions.CustomResource>;

  constructor(name: string, args: GatewayArgs, opts?: pulumi.ComponentResourceOptions) {
    super('rayshift:index:Gateway', name, {}, opts);
    const gatewayClass = args.gatewayClass;
    const rendered = renderComponentInputs<ConstructGatewayProps, GatewayConstruct>(
      this,
      name,
      // Anything but a component goes to the construct as given (a JavaScript caller may leave
      // the class out), whose validation names it.
      { ...args, gatewayClass: gatewayClass instanceof GatewayClass ? gatewayClass.className : gatewayClass },
      (chart, props) => new GatewayConstruct(chart, name, { ...props, metadata: metadataNamed(name, props.metadata) }),
      { dependsOn: gatewayClass instanceof GatewayClass ? [gatewayClass] : [] },
    );
    this.gatewayName = rendered.apply((r) => r.construct.name);
    this.namespace = rendered.apply((r) => r.construct.apiObject.metadata.namespace);
    this.resource = rendered.apply((r) => r.resources[0]);
    this.registerOutputs({ gatewayName: this.gatewayName, namespace: this.namespace });
  }
}
