/** The `@pulumi/kubernetes` children of a rayshift component: one per synthesized manifest. */
import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import { Manifest } from './manifests';

/** Extra options for the child of one manifest. */
export interface ChildOptions {
  /** Annotations added to the manifest (e.g. `pulumi.com/waitFor`). */
  readonly annotations?: Readonly<Record<string, string>>;
  /** Property paths another writer owns; Pulumi neither diffs nor resets them (e.g. `spec.rules`). */
  readonly ignoreChanges?: readonly string[];
  /** The child's Pulumi name, for kinds the component has more than one of. @default `<name>-<kind>` in lower case */
  readonly name?: string;
  /** Earlier Pulumi names of the child (same parent and type), so a renamed child keeps its object. @default none */
  readonly aliases?: readonly string[];
}

/**
 * Creates one `k8s.apiextensions.CustomResource` per manifest, parented to `parent` and named
 * `<name>-<kind>` in lower case (`llm-rayservice`, `llm-httproute`) unless `options(manifest)` names
 * it; `options(manifest)` also adds annotations, ignored paths or aliases. Names must be unique within one component. With
 * `source` (the resolved args the manifests were rendered from), every field but the type derives
 * from it, so the children depend on the resources its values came from.
 */
export function createKubernetesChildren(
  parent: pulumi.ComponentResource,
  name: string,
  manifests: readonly Manifest[],
  options: (manifest: Manifest) => ChildOptions = () => ({}),
  dependsOn: pulumi.Input<pulumi.Resource>[] = [],
  source?: pulumi.Output<unknown>,
): k8s.apiextensions.CustomResource[] {
  return manifests.map((manifest) => {
    const extra = options(manifest);
    const annotations = { ...(manifest.metadata.annotations as Record<string, string> | undefined), ...extra.annotations };
    const { apiVersion, kind, ...fields } = {
      ...manifest,
      metadata: { ...manifest.metadata, ...(Object.keys(annotations).length > 0 ? { annotations } : {}) },
    };
    const carried = source ? Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, source.apply(() => v)])) : fields;
    const args = { apiVersion, kind, ...carried } as k8s.apiextensions.CustomResourceArgs;
    return new k8s.apiextensions.CustomResource(extra.name ?? `${name}-${manifest.kind.toLowerCase()}`, args, {
      parent,
      dependsOn,
      ...(extra.ignoreChanges ? { ignoreChanges: [...extra.ignoreChanges] } : {}),
      ...(extra.aliases ? { aliases: extra.aliases.map((alias) => ({ name: alias })) } : {}),
    });
  });
}
