import { ApiObjectMetadata, JsonPatch } from 'cdk8s';
import { Construct } from 'constructs';
import { GatewayListener, validateGateway, validateGatewayClass } from '../spec/gateway';
import { GATEWAY, GATEWAY_CLASS } from '../spec/object-names';
import { ValidationResult } from '../spec/problem';
import { givenProps } from './given-props';
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
  readonly #props: GatewayClassProps;

  constructor(scope: Construct, id: string, props: GatewayClassProps) {
    super(scope, id, { ...GATEWAY_CLASS, metadata: props?.metadata });
    this.#props = givenProps(props);
    // cdk8s stamps the chart's namespace on every object; the namespace is known by now and final.
    if (this.apiObject.metadata.namespace !== undefined) this.apiObject.addJsonPatch(JsonPatch.remove('/metadata/namespace'));
  }

  protected renderSpec(): any {
    return { controllerName: this.#props.controllerName, ...(this.#props.description !== undefined ? { description: this.#props.description } : {}) };
  }

  protected validateManifest(manifest: unknown): ValidationResult {
    return validateGatewayClass(manifest);
  }
}

/** Props of a `Gateway`. */
export interface GatewayProps {
  /** Object metadata. @default a generated name */
  readonly metadata?: ApiObjectMetadata;
  /** The GatewayClass: a construct or its name. */
  readonly gatewayClass: GatewayClass | string;
  /** Listeners. @default one HTTP listener named "http" on port 80, as KubeRay creates */
  readonly listeners?: GatewayListener[];
}

/** A Gateway: a shared entry point whose routes split traffic between Ray clusters. */
export class Gateway extends ValidatedObject {
  readonly #gatewayClass: string | GatewayClass;
  readonly #listeners: GatewayListener[];

  constructor(scope: Construct, id: string, props: GatewayProps) {
    super(scope, id, { ...GATEWAY, metadata: props?.metadata });
    props = givenProps(props);
    this.#gatewayClass = props.gatewayClass;
    this.#listeners = props.listeners ?? [{ name: 'http', protocol: 'HTTP', port: 80 }];
  }

  protected renderSpec(): any {
    // Anything but a construct is written as given (a JavaScript caller may leave the
    // class out): validation then names `spec.gatewayClassName` and the value.
    const cls = this.#gatewayClass;
    return { gatewayClassName: cls instanceof GatewayClass ? cls.name : cls, listeners: this.#listeners };
  }

  protected validateManifest(manifest: unknown): ValidationResult {
    return validateGateway(manifest);
  }

  /** The listeners (a copy). */
  public get listeners(): GatewayListener[] {
    return [...this.#listeners];
  }
}
