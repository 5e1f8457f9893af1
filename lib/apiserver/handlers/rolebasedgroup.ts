/**
 * RoleBasedGroup status as the caller, with the group's CoordinatedPolicy when present, and the
 * `rollback` steering verb of rollouts rayshift's executor runs: the caller's right to it is checked
 * with a SubjectAccessReview on the virtual subresource (`rolebasedgroups/rollback`, verb `update`,
 * group `rayshift.dev`, as the RayServices' verbs), then the group is read and patched **as the
 * caller** (`get` and `patch` on it), with the steering rules of lib/engine/rbg-steering.ts (shared
 * with the CLI); a rollback that does not apply is FAILED_PRECONDITION.
 */
import { Code, ConnectError, type ServiceImpl } from '@connectrpc/connect';
import { create } from '@bufbuild/protobuf';
import type { KubeClient } from '../../runtime/kube/client';
import type { KubeObject } from '../../runtime/kube/types';
import { COORDINATED_POLICY_TYPE, RBG_V1ALPHA2_TYPE } from '../../spec/object-names';
import { scopeOf } from '../auth/request-scope';
import { roleBasedGroupFromKube } from '../convert/rolebasedgroup';
import { ListRoleBasedGroupsResponseSchema, type RoleBasedGroupService } from '../gen/rayshift/v1/rolebasedgroup_pb';
import { rollbackGroup } from '../../runtime/rbg/rollback-request';
import { kubeCall } from './kube-call';

/** The CoordinatedPolicy named like `group`, when it exists and the caller may read it. */
async function policyOf(kube: KubeClient, group: KubeObject): Promise<KubeObject | undefined> {
  try {
    return await kube.tryGet(COORDINATED_POLICY_TYPE, String(group.metadata.name), group.metadata.namespace);
  } catch {
    return undefined;
  }
}

/** The RoleBasedGroup handlers. */
export function roleBasedGroups(): ServiceImpl<typeof RoleBasedGroupService> {
  return {
    async getRoleBasedGroup(req, ctx) {
      const { kube } = scopeOf(ctx);
      const group = await kubeCall({ kind: 'RoleBasedGroup', namespace: req.namespace, name: req.name }, () => kube.get(RBG_V1ALPHA2_TYPE, req.name, req.namespace));
      return roleBasedGroupFromKube(group, await policyOf(kube, group));
    },

    async listRoleBasedGroups(req, ctx) {
      const { kube } = scopeOf(ctx);
      const list = await kubeCall({ kind: 'RoleBasedGroup', namespace: req.namespace }, () => kube.listAll(RBG_V1ALPHA2_TYPE, { namespace: req.namespace }));
      const groups = await Promise.all(list.items.map(async (g) => roleBasedGroupFromKube(g, await policyOf(kube, g))));
      return create(ListRoleBasedGroupsResponseSchema, { roleBasedGroups: groups });
    },

    async rollbackRoleBasedGroup(req, ctx) {
      const scope = scopeOf(ctx);
      const subject = { kind: 'RoleBasedGroup', namespace: req.namespace, name: req.name };
      await scope.authorize({ group: 'rayshift.dev', resource: 'rolebasedgroups', subresource: 'rollback', verb: 'update', namespace: req.namespace, name: req.name });
      const record = { verb: 'rollback', user: scope.caller.username, reason: req.reason, time: new Date().toISOString() };
      const outcome = await kubeCall(subject, () => rollbackGroup(scope.kube, req.namespace, req.name, record));
      if (!outcome.done) {
        if (outcome.missing) throw new ConnectError(`RoleBasedGroup ${req.namespace}/${req.name} not found`, Code.NotFound);
        throw new ConnectError(outcome.refusal, Code.FailedPrecondition);
      }
      return roleBasedGroupFromKube(outcome.group, await policyOf(scope.kube, outcome.group));
    },
  };
}
