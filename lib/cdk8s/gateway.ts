import { ApiObjectMetadata, JsonPatch } from 'cdk8s';
import { Construct } from 'constructs';
import { Gateway as GatewayApiGateway, GatewayClass as GatewayApiGatewayClass } from '../../imports/gateway-gateway.networking.k8s.io';
import { GatewayListener, validateGateway, validateGatewayClass } from '../spec/gateway';
import { ValidatedObject } from './validated-object';

/** Props of a `GatewayClass`. */
export interface GatewayClassProps {
  /** Object metadata. @default a generated name */
  readonly metadata?: ApiObjectMetadata;
  /** The implementation's controller name, e.g. `traefik.io/gateway-controller`. */
  readonly controllerName: string;
  /** Human-readable description. @default none */
  readonly description?: string;
}

/**
 * A cluster-scoped GatewayClass naming the data plane implementation. It has no namespace: the
 * chart's (or one given in `metadata`) is left out of the manifest.
 */
export class GatewayClass extends ValidatedObject {
  constructor(scope: Construct, id: string, props: GatewayClassProps) {
    super(scope, id, {
      ...GatewayApiGatewayClass.GVK,
      metadata: props.metadata,
      spec: () => ({
        controllerName: props.controllerName,
        ...(props.description !== undefined ? { description: props.description } : {}),
      }),
      validate: validateGatewayClass,
    });
    // cdk8s stamps the chart's namespace on every object; the namespace is known by now and final.
    if (this.apiObject.metadata.namespace !== undefined) this.apiObject.addJsonPatch(JsonPatch.remove('/metadata/namespace'));
  }
}

/** Props of a `Gateway`. */
export interface GatewayProps {
  /** Object metadata. @default a generated name */
  readonly metadata?: ApiObjectMetadata;
  /** The GatewayClass: a construct or its name. */
  readonly gatewayClass: GatewayClass | string;
  /** Listeners. @default one HTTP listener named "http" on port 80, as KubeRay creates */
  readonly listeners?: readonly GatewayListener[];
}

/** A Gateway: a shared entry point whose routes split traffic between Ray clusters. */
export class Gateway extends ValidatedObject {
  /** The listeners. */
  public readonly listeners: readonly GatewayListener[];

  constructor(scope: Construct, id: string, props: GatewayProps) {
    const listeners = props.listeners ?? [{ name: 'http', protocol: 'HTTP', port: 80 }];
    super(scope, id, {
      ...GatewayApiGateway.GVK,
      metadata: props.metadata,
      spec: () => ({
        gatewayClassName: typeof props.gatewayClass === 'string' ? props.gatewayClass : props.gatewayClass.name,
        listeners,
      }),
      validate: validateGateway,
    });
    this.listeners = listeners;
  }
}
