/**
 * Where a test cluster's controllers and their CRDs come from: the build folder of each tool
 * (`scripts/build-cluster.sh`, pinned by `scripts/cluster-bin-dir.sh`), the programs in them, and
 * the CRD files KubeRay's operator and each RBG release need before they start.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { crdsOf } from '../../lib/crds/catalog';
import { projectRoot, resolveCrdFile, sharedCrdDir } from '../../lib/crds/resolve';
import { controlPlaneBinDir } from './controlplane-files';
import { isExecutable, runBinDirScript } from './processes';
import { rbgSourceTree } from './rbg-v08-webhook';

/** A controller built by `scripts/build-cluster.sh` (`rbg` is RBG v0.7.0; `rbg-v06`, `rbg-v08` the other releases). */
export type ClusterTool = 'kwok' | 'rbg' | 'rbg-v06' | 'rbg-v08' | 'kuberay';

/** The RBG release a cluster runs: `true` is v0.7.0. */
export type ClusterRbg = boolean | 'v0.6' | 'v0.7' | 'v0.8';

/** The build of each RBG release. */
const RBG_TOOL: Record<'v0.6' | 'v0.7' | 'v0.8', ClusterTool> = { 'v0.6': 'rbg-v06', 'v0.7': 'rbg', 'v0.8': 'rbg-v08' };

/** Which controllers a cluster runs: KubeRay's operator, and which RBG release. */
export interface ControllerChoice {
  readonly kuberay?: boolean;
  readonly rbg?: ClusterRbg;
}

/** The program each tool's build makes. */
const PROGRAM: Record<ClusterTool, string> = { kwok: 'kwok', rbg: 'rbgs', 'rbg-v06': 'rbgs', 'rbg-v08': 'rbgs', kuberay: 'kuberay-operator' };
/** RBG's controller checks at start-up that all of these exist (from ../shared/crds or the pinned URL). */
const RBG_CRD_FILES = [
  'clusterengineruntimeprofiles',
  'coordinatedpolicies',
  'instances',
  'instancesets',
  'rolebasedgroups',
  'rolebasedgroupscalingadapters',
  'rolebasedgroupsets',
  'roleinstances',
  'roleinstancesets',
].map((plural) => `workloads.x-k8s.io_${plural}.yaml`);
/** RBG v0.6.0 serves these (no RoleInstances or CoordinatedPolicies yet). */
const RBG_V06_CRD_FILES = ['clusterengineruntimeprofiles', 'instances', 'instancesets', 'rolebasedgroups', 'rolebasedgroupscalingadapters', 'rolebasedgroupsets'].map(
  (plural) => `workloads.x-k8s.io_${plural}.yaml`,
);

/** RBG v0.8.0-alpha.5 also serves RoleBasedGroupWarmups. */
const RBG_V08_CRD_FILES = [...RBG_CRD_FILES, 'workloads.x-k8s.io_rolebasedgroupwarmups.yaml'];

/** The build of the RBG release `rbg` asks for, or none. */
export function rbgTool(rbg: ClusterRbg | undefined): ClusterTool | undefined {
  if (!rbg) return undefined;
  return RBG_TOOL[rbg === true ? 'v0.7' : rbg];
}

/**
 * A CRD file of an RBG release: `../shared/crds` (or its download) when the catalog pins it there,
 * else the release's source tree that `build-cluster.sh` builds from (`$RAYSHIFT_UPSTREAM`, default
 * ../shared/upstream, else its clone in the cache), where every CRD the controller serves is.
 */
async function rbgCrdFile(version: string, file: string): Promise<string> {
  const shared = path.join(sharedCrdDir(), 'rbg', version, file);
  if (fs.existsSync(shared)) return shared;
  const tree = rbgSourceTree(version);
  const inTree = tree && path.join(tree, 'config', 'crd', 'bases', file);
  return inTree && fs.existsSync(inTree) ? inTree : resolveCrdFile({ project: 'rbg', version, file });
}

/**
 * The folder holding one tool: `$RAYSHIFT_<TOOL>_BIN`, else the cache folder that
 * `scripts/build-cluster.sh` builds into (computed by `scripts/cluster-bin-dir.sh`).
 */
export function clusterBinDir(tool: ClusterTool, what: 'folder' | 'version' = 'folder'): string {
  return runBinDirScript(path.join(projectRoot(), 'scripts', 'cluster-bin-dir.sh'), what === 'version' ? ['--version', tool] : [tool]);
}

/** The CRD files the KubeRay operator needs (its release's, RayJob included) and RBG's controller needs. */
export async function controllerCrdFiles(opts: ControllerChoice): Promise<string[]> {
  const files: Promise<string>[] = [];
  if (opts.kuberay) {
    const version = clusterBinDir('kuberay', 'version');
    // RayJob is not in the catalog (rayshift makes none), yet the operator exits without its CRD.
    const crds = [...crdsOf('kuberay', version), { project: 'kuberay' as const, version, file: 'ray.io_rayjobs.yaml' }];
    files.push(...crds.map((c) => resolveCrdFile(c)));
  }
  const rbg = rbgTool(opts.rbg);
  if (rbg) {
    const version = clusterBinDir(rbg, 'version');
    const crdFiles = rbg === 'rbg-v06' ? RBG_V06_CRD_FILES : rbg === 'rbg-v08' ? RBG_V08_CRD_FILES : RBG_CRD_FILES;
    files.push(...crdFiles.map((file) => rbgCrdFile(version, file)));
  }
  return Promise.all(files);
}

/** Paths of every program the cluster runs; throws naming the build when one is missing. */
export function locateBinaries(opts: ControllerChoice): Record<string, string> {
  const cpBin = controlPlaneBinDir();
  const found: Record<string, string> = {
    'kube-controller-manager': path.join(cpBin, 'kube-controller-manager'),
    'kube-scheduler': path.join(cpBin, 'kube-scheduler'),
  };
  const rbg = rbgTool(opts.rbg);
  const tools: ClusterTool[] = ['kwok', ...(opts.kuberay ? (['kuberay'] as const) : []), ...(rbg ? [rbg] : [])];
  for (const t of tools) found[PROGRAM[t]] = path.join(clusterBinDir(t), PROGRAM[t]);
  const missing = Object.entries(found).filter(([, file]) => !isExecutable(file));
  if (missing.length > 0) {
    throw new Error(
      `The test cluster is not built: ${missing.map(([, f]) => f).join(', ')} missing. Build it with ` +
        '`npm run controlplane:build` (kube-scheduler, kube-controller-manager) and `bash scripts/build-cluster.sh` ' +
        '(kwok, rbgs, kuberay-operator; 3-5 min each on 2 cores when cold, see docs/test-cluster.md), or point RAYSHIFT_CONTROLPLANE_BIN / ' +
        'RAYSHIFT_KWOK_BIN / RAYSHIFT_RBG_BIN / RAYSHIFT_KUBERAY_BIN at prebuilt binaries.',
    );
  }
  return found;
}
