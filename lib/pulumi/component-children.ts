/** The shared body of rayshift's components: validate through the cdk8s construct, then create its objects. */
import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import { ApiObjectMetadata, Chart } from 'cdk8s';
import { ValidatedObject } from '../cdk8s/validated-object';
import { hasInputs, resolveInputs } from './inputs';
import { ChildOptions, createKubernetesChildren } from './kubernetes-children';
import { Manifest, synthesizeValidated } from './manifests';

/** What `renderComponent` produced. */
export interface RenderedComponent<T extends ValidatedObject> {
  /** The cdk8s construct, for its derived values (name, spec, executor). */
  readonly construct: T;
  /** Every manifest the construct synthesized (children or not). */
  readonly manifests: readonly Manifest[];
  /** The `@pulumi/kubernetes` children created. */
  readonly resources: k8s.apiextensions.CustomResource[];
}

/** How `renderComponent` turns manifests into children. */
export interface RenderOptions<T extends ValidatedObject = ValidatedObject> {
  /** Options of one manifest's child (`construct`: the construct that synthesized it, with its children). */
  readonly childOptions?: (manifest: Manifest, construct: T) => ChildOptions;
  /** Only manifests this accepts become children. @default every manifest */
  readonly include?: (manifest: Manifest) => boolean;
  /** Resources the children wait for (a GatewayClass, a Gateway). */
  readonly dependsOn?: pulumi.Input<pulumi.Resource>[];
}

/** The construct's metadata with the object's name defaulting to the component's Pulumi name. */
export function metadataNamed(name: string, metadata: ApiObjectMetadata | undefined): ApiObjectMetadata {
  return { ...metadata, name: metadata?.name ?? name };
}

/**
 * Builds the construct with `define` (validation failing the component with every problem) and
 * creates one `@pulumi/kubernetes` child per synthesized manifest that `include` accepts.
 */
export function renderComponent<T extends ValidatedObject>(
  parent: pulumi.ComponentResource,
  name: string,
  define: (chart: Chart) => T,
  options: RenderOptions<T> = {},
  source?: pulumi.Output<unknown>,
): RenderedComponent<T> {
  const { construct, manifests } = synthesizeValidated(parent, define);
  const children = options.include ? manifests.filter(options.include) : manifests;
  const childOptions = options.childOptions;
  const resources = createKubernetesChildren(parent, name, children, childOptions && ((m) => childOptions(m, construct)), options.dependsOn, source);
  return { construct, manifests, resources };
}

/**
 * `renderComponent` for args whose props may be `pulumi.Input`s. Plain values render at once, so a
 * problem fails the component's construction as before. Pending values render once they resolve:
 * the children are created then, depending on the resources the values came from, and a problem
 * rejects the result with the same `ResourceError` text, which fails `pulumi preview`/`up` before
 * any child is registered. While a value is unknown (a preview before its resource exists), the
 * children are not listed.
 */
export function renderComponentInputs<P extends object, T extends ValidatedObject>(
  parent: pulumi.ComponentResource,
  name: string,
  args: object,
  define: (chart: Chart, props: P) => T,
  options: RenderOptions<T> = {},
): pulumi.Output<RenderedComponent<T>> {
  if (!hasInputs(args)) {
    const rendered = renderComponent(parent, name, (chart) => define(chart, args as P), options);
    // `apply` hands its result on as it is (`pulumi.output` would copy the construct into a plain object).
    return pulumi.output(0).apply(() => rendered);
  }
  const props = resolveInputs<P>(args);
  return props.apply((resolved) => renderComponent(parent, name, (chart) => define(chart, resolved), options, props));
}
