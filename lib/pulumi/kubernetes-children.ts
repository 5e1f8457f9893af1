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
}

/**
 * Creates one `k8s.apiextensions.CustomResource` per manifest, parented to `parent` and named
 * `<name>-<kind>` in lower case (`llm-rayservice`, `llm-httproute`). `options(manifest)` adds
 * annotations or ignored paths for a manifest. Kinds must be unique within one component.
 */
export function createKubernetesChildren(
  parent: pulumi.ComponentResource,
  name: string,
  manifests: readonly Manifest[],
  options: (manifest: Manifest) => ChildOptions = () => ({}),
  dependsOn: pulumi.Input<pulumi.Resource>[] = [],
): k8s.apiextensions.CustomResource[] {
  return manifests.map((manifest) => {
    const extra = options(manifest);
    const annotations = { ...(manifest.metadata.annotations as Record<string, string> | undefined), ...extra.annotations };
    const args = {
      ...manifest,
      metadata: { ...manifest.metadata, ...(Object.keys(annotations).length > 0 ? { annotations } : {}) },
    } as k8s.apiextensions.CustomResourceArgs;
    return new k8s.apiextensions.CustomResource(`${name}-${manifest.kind.toLowerCase()}`, args, {
      parent,
      dependsOn,
      ...(extra.ignoreChanges ? { ignoreChanges: [...extra.ignoreChanges] } : {}),
    });
  });
}
