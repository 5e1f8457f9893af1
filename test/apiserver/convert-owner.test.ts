/**
 * Which operator replica works on an object, in the core API: a RayService's `status.owner` and a
 * RoleBasedGroup's status-document `owner` become the `owner` message (replica and shard) over REST
 * JSON and gRPC binary alike; shard 0 stays distinct from no shard; KubeRay's own RayServices and
 * objects no replica has written have none.
 */
import { fromBinary, toBinary, toJson } from '@bufbuild/protobuf';
import { roleBasedGroupFromKube } from '../../lib/apiserver/convert/rolebasedgroup';
import { upgradeStatusOf } from '../../lib/apiserver/convert/upgrade-status';
import { RoleBasedGroupSchema } from '../../lib/apiserver/gen/rayshift/v1/rolebasedgroup_pb';
import { UpgradeStatusSchema } from '../../lib/apiserver/gen/rayshift/v1/upgrade_pb';
import type { KubeObject } from '../../lib/runtime/kube/types';
import { STATUS_ANNOTATION } from '../../lib/spec/object-names';
import { rayService } from '../support/operator-env';

function serviceWith(status: Record<string, unknown>, apiVersion?: string): KubeObject {
  const obj = rayService('ns', 'svc', {});
  return { ...obj, ...(apiVersion ? { apiVersion } : {}), status: { phase: 'Running', reason: 'UpToDate', ...status } };
}

function groupWith(doc: Record<string, unknown> | undefined): KubeObject {
  return {
    apiVersion: 'workloads.x-k8s.io/v1alpha2',
    kind: 'RoleBasedGroup',
    metadata: { name: 'pd', namespace: 'llm', ...(doc ? { annotations: { [STATUS_ANNOTATION]: JSON.stringify(doc) } } : {}) },
    spec: { roles: [] },
  };
}

test('a RayService status owner becomes the owner message, in JSON and binary', () => {
  const u = upgradeStatusOf(serviceWith({ owner: { replica: 'rayshift-operator-7d9f-x2k4p', shard: 5 } }));
  expect(u.owner).toMatchObject({ replica: 'rayshift-operator-7d9f-x2k4p', shard: 5 });
  expect((toJson(UpgradeStatusSchema, u) as any).owner).toEqual({ replica: 'rayshift-operator-7d9f-x2k4p', shard: 5 });
  expect(fromBinary(UpgradeStatusSchema, toBinary(UpgradeStatusSchema, u)).owner).toMatchObject({ replica: 'rayshift-operator-7d9f-x2k4p', shard: 5 });
});

test('shard 0 is kept apart from an operator that is not sharded', () => {
  expect((toJson(UpgradeStatusSchema, upgradeStatusOf(serviceWith({ owner: { replica: 'r', shard: 0 } }))) as any).owner).toEqual({ replica: 'r', shard: 0 });
  expect((toJson(UpgradeStatusSchema, upgradeStatusOf(serviceWith({ owner: { replica: 'r' } }))) as any).owner).toEqual({ replica: 'r' });
});

test('no owner for a service no replica wrote, nor for a KubeRay RayService', () => {
  expect(upgradeStatusOf(serviceWith({})).owner).toBeUndefined();
  expect(upgradeStatusOf(serviceWith({ owner: { replica: 'r', shard: 1 } }, 'ray.io/v1')).owner).toBeUndefined();
});

test('a RoleBasedGroup status document owner becomes the group\'s owner message', () => {
  const g = roleBasedGroupFromKube(groupWith({ observedGeneration: 2, coordinations: [], owner: { replica: 'rayshift-operator-0', shard: 2 } }), undefined);
  expect(g.owner).toMatchObject({ replica: 'rayshift-operator-0', shard: 2 });
  expect((toJson(RoleBasedGroupSchema, g) as any).owner).toEqual({ replica: 'rayshift-operator-0', shard: 2 });
  expect(roleBasedGroupFromKube(groupWith({ observedGeneration: 2, coordinations: [] }), undefined).owner).toBeUndefined();
  expect(roleBasedGroupFromKube(groupWith(undefined), undefined).owner).toBeUndefined();
});
