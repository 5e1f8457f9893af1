/**
 * The RBG releases the cluster suites run on their real controllers (test/support/cluster.ts option
 * `rbg`): v0.7.0 (RoleInstanceSets of a `v1alpha2` group), v0.6.0 (StatefulSets of a `v1alpha1`
 * group) and v0.8.0-alpha.5 (RoleInstanceSets, with its real validating webhook). One list, so a
 * suite that runs `describe.each(RBG_RELEASES)` runs on every release rayshift supports. Test
 * support, not the package's API.
 */
import { ResourceType } from '../../lib/runtime/kube/types';
import { RBG_V1ALPHA1_TYPE, RBG_V1ALPHA2_TYPE, ROLE_INSTANCE_SET_TYPE, RbgResourceType, STATEFUL_SET_TYPE } from '../../lib/spec/object-names';
import type { RbgRelease, RoleBasedGroupVersion } from '../../lib/spec/rbg';
import type { ClusterRbg } from './cluster-files';

/** One RBG release under test: its build, its group API version, and the kinds of its group and workloads. */
export interface ReleaseUnderTest {
  /** The release's tag, as suites name it. */
  readonly name: string;
  /** The test cluster's `rbg` option that runs it. */
  readonly rbg: ClusterRbg;
  /** The construct's `rbgVersion`. */
  readonly rbgVersion: RbgRelease;
  /** The construct's `version` (the group's API version). */
  readonly version: RoleBasedGroupVersion;
  readonly groupType: RbgResourceType;
  readonly workloadType: ResourceType;
}

/** Every release rayshift supports, v0.7.0 (the default) first. */
export const RBG_RELEASES: readonly ReleaseUnderTest[] = [
  { name: 'v0.7.0', rbg: 'v0.7', rbgVersion: 'v0.7', version: 'v1alpha2', groupType: RBG_V1ALPHA2_TYPE, workloadType: ROLE_INSTANCE_SET_TYPE },
  { name: 'v0.6.0', rbg: 'v0.6', rbgVersion: 'v0.6', version: 'v1alpha1', groupType: RBG_V1ALPHA1_TYPE, workloadType: STATEFUL_SET_TYPE },
  { name: 'v0.8.0-alpha.5', rbg: 'v0.8', rbgVersion: 'v0.8', version: 'v1alpha2', groupType: RBG_V1ALPHA2_TYPE, workloadType: ROLE_INSTANCE_SET_TYPE },
];

