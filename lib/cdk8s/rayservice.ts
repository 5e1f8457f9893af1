import { ApiObject, ApiObjectMetadata } from 'cdk8s';
import { Construct, IConstruct, Node } from 'constructs';
import { GATEWAY, HTTPROUTE, KUBERAY_RAYSERVICE, RAYSHIFT_RAYSERVICE, serviceGatewayName, serviceRouteName } from '../spec/object-names';
import { RayClusterConfig } from '../spec/raycluster';
import {
  RAY_SERVICE_EXECUTORS,
  RayServiceExecutor,
  RayServiceSpec,
  RayServiceUpgradeStrategy,
  RayshiftExtensions,
  validateRayService,
} from '../spec/rayservice';
import { ServeConfig, serializeServeConfig, toWireServeConfig, typedServeConfigProblems } from '../spec/serve-config';
import { RayClusterSpecBuilder } from './raycluster-builder';
import { ProblemList, ValidationResult, checkOneOf } from '../spec/problem';
import { givenProps } from './given-props';
import { ValidatedObject } from './validated-object';

const indexes = new WeakMap<IConstruct, Set<string>>();

/**
 * `kind/namespace/name` of every ApiObject in the construct's app, indexed once per app (the
 * collision checks run at synthesis, after every object exists), so the check stays linear.
 */
function appObjects(scope: IConstruct): Set<string> {
  const root = Node.of(scope).root;
  let index = indexes.get(root);
  if (!index) {
    index = new Set(
      Node.of(root)
        .findAll()
        .filter((c): c is ApiObject => c instanceof ApiObject)
        .map((o) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.name}`),
    );
    indexes.set(root, index);
  }
  return index;
}

/** Props of a `RayService`. */
export interface RayServiceProps {
  /** Object metadata. @default a name generated from the construct path */
  readonly metadata?: ApiObjectMetadata;
  /** Who runs upgrades: `kuberay` or `operator` (checked at synthesis). @default "kuberay" */
  readonly executor?: RayServiceExecutor;
  /** The cluster: a builder (which turns the autoscaler on for incremental upgrades) or a raw RayCluster spec. */
  readonly rayClusterConfig: RayClusterSpecBuilder | RayClusterConfig;
  /**
   * The Serve applications, typed or as the `serveConfigV2` YAML string.
   * @default none: the cluster runs no Serve application, so it never becomes Ready (as with KubeRay); validation warns
   */
  readonly serveConfig?: ServeConfig | string;
  /** How cluster-spec changes roll out. @default KubeRay's default (NewCluster, blue/green) */
  readonly upgradeStrategy?: RayServiceUpgradeStrategy;
  /** Seconds an old cluster is kept after it stops serving. @default 60 */
  readonly rayClusterDeletionDelaySeconds?: number;
  /** Keep the head pod out of the serve Service. @default false */
  readonly excludeHeadPodFromServeSvc?: boolean;
  /** rayshift extensions (Gateway reference, progress deadline, pause, route kind); executor `operator` only. @default none */
  readonly rayshift?: RayshiftExtensions;
}

/**
 * A RayService whose upgrade options are validated before anything reaches a cluster.
 *
 * With executor `kuberay`, KubeRay creates `<name>-gateway` and `<name>-httproute` for an
 * incremental upgrade itself; this construct synthesizes only the RayService and fails
 * synthesis if any chart of the app defines objects with those names in its namespace.
 */
export class RayService extends ValidatedObject {
  /** The executor. */
  public readonly executor: RayServiceExecutor;
  /** The synthesized spec. */
  public readonly spec: RayServiceSpec;
  /** The Serve config as typed props (camelCase), when it was given so. */
  readonly #typedServeConfig?: ServeConfig;
  /** The builder the cluster came from, when it was given one: its props' problems are reported with the spec's. */
  readonly #builder?: RayClusterSpecBuilder;

  constructor(scope: Construct, id: string, props: RayServiceProps) {
    props = givenProps(props);
    const executor = props.executor ?? 'kuberay';
    const incremental = props.upgradeStrategy?.type === 'NewClusterWithIncrementalUpgrade';
    const given = props.rayClusterConfig;
    const builder = given instanceof RayClusterSpecBuilder ? given : undefined;
    const cluster = given instanceof RayClusterSpecBuilder ? given.toRayClusterConfig(incremental) : given;
    // A null Serve config (JavaScript, or Python's None) is no config, as when it is left out.
    const serveConfig = props.serveConfig ?? undefined;
    const spec: RayServiceSpec = {
      rayClusterConfig: cluster,
      ...(serveConfig !== undefined ? { serveConfigV2: typeof serveConfig === 'string' ? serveConfig : serializeServeConfig(serveConfig) } : {}),
      ...(props.upgradeStrategy !== undefined ? { upgradeStrategy: props.upgradeStrategy } : {}),
      ...(props.rayClusterDeletionDelaySeconds !== undefined ? { rayClusterDeletionDelaySeconds: props.rayClusterDeletionDelaySeconds } : {}),
      ...(props.excludeHeadPodFromServeSvc !== undefined ? { excludeHeadPodFromServeSvc: props.excludeHeadPodFromServeSvc } : {}),
      ...(props.rayshift !== undefined ? { rayshift: props.rayshift } : {}),
    };
    super(scope, id, { ...(executor === 'operator' ? RAYSHIFT_RAYSERVICE : KUBERAY_RAYSERVICE), metadata: props.metadata });
    this.executor = executor;
    this.spec = spec;
    this.#typedServeConfig = typeof serveConfig === 'string' ? undefined : serveConfig;
    this.#builder = builder;
    if (executor === 'kuberay' && incremental) {
      Node.of(this).addValidation({ validate: () => this.kubeRayNameCollisions() });
    }
  }

  protected renderSpec(): any {
    return this.spec;
  }

  protected validateManifest(manifest: unknown): ValidationResult {
    const problems = new ProblemList();
    // TypeScript's type does not hold JavaScript and jsii callers; an unknown executor would
    // otherwise synthesize KubeRay's apiVersion without a word.
    checkOneOf(problems, 'executor', this.executor, RAY_SERVICE_EXECUTORS, 'an executor');
    // The wire form is what `spec.serveConfigV2` holds; passing it spares parsing the YAML just written.
    problems.addAll(validateRayService(manifest, this.#typedServeConfig && toWireServeConfig(this.#typedServeConfig)));
    if (this.#typedServeConfig) problems.addAll(typedServeConfigProblems(this.#typedServeConfig), 'serveConfig');
    if (this.#builder) problems.addAll(this.#builder.problems(), 'rayClusterConfig');
    return problems.result();
  }

  /** Objects anywhere in the app that KubeRay would overwrite: it owns `<name>-gateway` and `<name>-httproute`. */
  private kubeRayNameCollisions(): string[] {
    const objects = appObjects(this);
    const namespace = this.apiObject.metadata.namespace ?? '';
    return [
      [GATEWAY.kind, serviceGatewayName(this.name)],
      [HTTPROUTE.kind, serviceRouteName(this.name, 'HTTP')],
    ]
      .filter(([kind, name]) => objects.has(`${kind}/${namespace}/${name}`))
      .map(
        ([kind, name]) =>
          `${this.describe()}: ${kind}/${name} collides with the ${kind} KubeRay creates for this incremental upgrade; rename it, or use executor "operator" with rayshift.gatewayRef`,
      );
  }

}
