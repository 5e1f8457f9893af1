/**
 * The upstream CustomResourceDefinitions rayshift targets, pinned by project and version.
 *
 * The files themselves are data of their projects and are never committed here: they are
 * resolved from `../shared/crds/<project>/<version>/<file>` when that folder exists, and
 * otherwise downloaded once from the pinned upstream URL into `.cache/crds/` (see `resolve.ts`).
 * Only `npm run import` and tests resolve them: what synthesis needs is generated from them into
 * `imports/` and `generated/` and committed.
 */

/** A project whose CRDs rayshift synthesizes objects for. */
export type CrdProject = 'kuberay' | 'gateway-api' | 'rbg';

/** One pinned CRD file of one project release. */
export interface PinnedCrd {
  /** Project the CRD belongs to. */
  readonly project: CrdProject;
  /** Release tag, e.g. `v1.7.0`. */
  readonly version: string;
  /** File name in the project's CRD folder, e.g. `ray.io_rayservices.yaml`. */
  readonly file: string;
}

const URL_PATTERNS: Record<CrdProject, string> = {
  kuberay: 'https://raw.githubusercontent.com/ray-project/kuberay/TAG/ray-operator/config/crd/bases/FILE',
  'gateway-api': 'https://raw.githubusercontent.com/kubernetes-sigs/gateway-api/TAG/config/crd/standard/FILE',
  rbg: 'https://raw.githubusercontent.com/sgl-project/rbg/TAG/config/crd/bases/FILE',
};

/** Every release of each project that rayshift supports; the last one of each list is the newest. */
export const SUPPORTED_VERSIONS: Record<CrdProject, readonly string[]> = {
  kuberay: ['v1.5.1', 'v1.7.0'],
  'gateway-api': ['v1.2.1', 'v1.4.0', 'v1.6.1'],
  rbg: ['v0.6.0', 'v0.7.0', 'v0.8.0-alpha.5'],
};

/** The CRD files rayshift uses from each project (a file missing in an older release is listed per version below). */
const FILES: Record<CrdProject, readonly string[]> = {
  kuberay: ['ray.io_rayservices.yaml', 'ray.io_rayclusters.yaml'],
  'gateway-api': [
    'gateway.networking.k8s.io_gatewayclasses.yaml',
    'gateway.networking.k8s.io_gateways.yaml',
    'gateway.networking.k8s.io_httproutes.yaml',
    'gateway.networking.k8s.io_grpcroutes.yaml',
    'gateway.networking.k8s.io_referencegrants.yaml',
  ],
  // RoleInstanceSets are read by the operator's rollout executor (a role's workload); the
  // ScalingAdapter decides RBG v0.8's webhook rule on `replicas`; the Warmup (v0.8) is synthesized
  // by the RoleBasedGroupWarmup construct and created by the executors before a surge.
  rbg: [
    'workloads.x-k8s.io_rolebasedgroups.yaml',
    'workloads.x-k8s.io_coordinatedpolicies.yaml',
    'workloads.x-k8s.io_roleinstancesets.yaml',
    'workloads.x-k8s.io_rolebasedgroupscalingadapters.yaml',
    'workloads.x-k8s.io_rolebasedgroupwarmups.yaml',
  ],
};

/**
 * `CoordinatedPolicy` and `RoleInstanceSet` first shipped in RBG v0.7.0; v0.6.0's ScalingAdapter is
 * not pinned, because nothing rayshift runs against v0.6.0 reads it; `RoleBasedGroupWarmup` first
 * shipped in v0.8.
 */
const MISSING: ReadonlyArray<PinnedCrd> = [
  { project: 'rbg', version: 'v0.6.0', file: 'workloads.x-k8s.io_coordinatedpolicies.yaml' },
  { project: 'rbg', version: 'v0.6.0', file: 'workloads.x-k8s.io_roleinstancesets.yaml' },
  { project: 'rbg', version: 'v0.6.0', file: 'workloads.x-k8s.io_rolebasedgroupscalingadapters.yaml' },
  { project: 'rbg', version: 'v0.6.0', file: 'workloads.x-k8s.io_rolebasedgroupwarmups.yaml' },
  { project: 'rbg', version: 'v0.7.0', file: 'workloads.x-k8s.io_rolebasedgroupwarmups.yaml' },
];

/** Every pinned CRD file of one project release. */
export function crdsOf(project: CrdProject, version: string): PinnedCrd[] {
  if (!SUPPORTED_VERSIONS[project].includes(version)) {
    throw new Error(
      `unsupported ${project} version ${JSON.stringify(version)}; supported: ${SUPPORTED_VERSIONS[project].join(', ')}`,
    );
  }
  return FILES[project]
    .map((file) => ({ project, version, file }))
    .filter((c) => !MISSING.some((m) => m.project === c.project && m.version === c.version && m.file === c.file));
}

/** The newest supported release of a project. */
export function newestVersion(project: CrdProject): string {
  const versions = SUPPORTED_VERSIONS[project];
  return versions[versions.length - 1];
}

/** The pinned upstream URL of a CRD file. */
export function upstreamUrl(crd: PinnedCrd): string {
  return URL_PATTERNS[crd.project].replace('TAG', crd.version).replace('FILE', crd.file);
}

/** Finds the pinned CRD whose upstream URL is `url`, or undefined when the URL is not pinned. */
export function crdOfUrl(url: string): PinnedCrd | undefined {
  for (const project of Object.keys(SUPPORTED_VERSIONS) as CrdProject[]) {
    for (const version of SUPPORTED_VERSIONS[project]) {
      const match = crdsOf(project, version).find((c) => upstreamUrl(c) === url);
      if (match) return match;
    }
  }
  return undefined;
}
