/** Pulumi components of the Gateway API entry points: `GatewayClass` and `Gateway`. */
import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import { Gateway as GatewayConstruct, GatewayClass as GatewayClassConstruct, GatewayClassProps, GatewayProps as ConstructGatewayProps } from '../cdk8s/gateway';
import { metadataNamed, renderComponent } from './component-children';

/** Props of the `GatewayClass` component: those of the cdk8s construct. */
export type GatewayClassArgs = GatewayClassProps;

/** A cluster-scoped GatewayClass (type `rayshift:index:GatewayClass`), validated by the model. */
export class GatewayClass extends pulumi.ComponentResource {
  /** The class name in the cluster. */
  public readonly className: string;
  /** The `@pulumi/kubernetes` GatewayClass. */
  public readonly resource: k8s.apiextensions.CustomResource;

  constructor(name: string, args: GatewayClassArgs, opts?: pulumi.ComponentResourceOptions) {
    super('rayshift:index:GatewayClass', name, {}, opts);
    const { construct, resources } = renderComponent(this, name, (chart) => new GatewayClassConstruct(chart, name, { ...args, metadata: metadataNamed(name, args.metadata) }));
    this.className = construct.name;
    this.resource = resources[0];
    this.registerOutputs({ className: this.className });
  }
}

/** Props of the `Gateway` component: the construct's, with the class given as a name or a `GatewayClass` component. */
export type GatewayArgs = Omit<ConstructGatewayProps, 'gatewayClass'> & {
  /** The GatewayClass: a component (the Gateway waits for it) or its name. */
  readonly gatewayClass: GatewayClass | string;
};

/** A Gateway (type `rayshift:index:Gateway`) whose routes split traffic between Ray clusters. */
export class Gateway extends pulumi.ComponentResource {
  /** The Gateway's name in the cluster. */
  public readonly gatewayName: string;
  /** The Gateway's namespace, when given. */
  public readonly namespace?: string;
  /** The `@pulumi/kubernetes` Gateway. */
  public readonly resource: k8s.apiextensions.CustomResource;

  constructor(name: string, args: GatewayArgs, opts?: pulumi.ComponentResourceOptions) {
    super('rayshift:index:Gateway', name, {}, opts);
    const gatewayClass = args.gatewayClass;
    const { construct, resources } = renderComponent(
      this,
      name,
      (chart) =>
        new GatewayConstruct(chart, name, {
          ...args,
          metadata: metadataNamed(name, args.metadata),
          // Anything but a component goes to the construct as given (a JavaScript caller may leave
          // the class out), whose validation names it.
          gatewayClass: gatewayClass instanceof GatewayClass ? gatewayClass.className : gatewayClass,
        }),
      { dependsOn: gatewayClass instanceof GatewayClass ? [gatewayClass] : [] },
    );
    this.gatewayName = construct.name;
    this.namespace = construct.apiObject.metadata.namespace;
    this.resource = resources[0];
    this.registerOutputs({ gatewayName: this.gatewayName, namespace: this.namespace });
  }
}
