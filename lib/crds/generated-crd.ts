/**
 * The rayshift `rayservices.rayshift.dev` CRD as committed in `generated/rayshift-rayservice-crd.json`.
 *
 * `npm run import` builds it with `rayshiftRayServiceCrd` from the newest supported KubeRay release
 * (`regenerate.ts`), so that synthesis reads a file shipped with the package instead of resolving
 * KubeRay's CRD from ../shared/crds or the network. test/upstream-crd/generated-crd.test.ts fails when the
 * file is stale.
 */
import type { JsonObject } from '../spec/read';
// A JSON import (not fs) so that tsc copies the file into build/ and `require` finds it in the package.
import generated from './generated/rayshift-rayservice-crd.json';

/** The committed file: where it came from, and the CRD. */
export interface GeneratedRayshiftCrdFile {
  /** Says the file is generated, by what and from which KubeRay file. */
  readonly $comment: string;
  /** The KubeRay release whose RayService CRD the rayshift CRD was built from. */
  readonly kubeRayVersion: string;
  /** The pinned upstream URL of that KubeRay CRD. */
  readonly source: string;
  /** The rayshift CRD. */
  readonly crd: JsonObject;
}

const file: GeneratedRayshiftCrdFile = generated;

/** The KubeRay release the committed rayshift CRD was built from. */
export const RAYSHIFT_CRD_KUBERAY_VERSION: string = file.kubeRayVersion;

/** The committed rayshift CRD; a fresh copy on each call, so callers may change theirs. */
export function generatedRayshiftRayServiceCrd(): JsonObject {
  return structuredClone(file.crd);
}
