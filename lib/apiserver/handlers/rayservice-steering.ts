/**
 * Steering verbs of operator-executed RayServices: pause, resume, promote, abort and rollback. The
 * caller's right to the verb is checked with a SubjectAccessReview on the virtual subresource
 * (`rayservices/<verb>`, verb `update`, group `rayshift.dev`); the service is then read and patched
 * **as the caller** (impersonated), so the caller also needs `get` and `patch` on the RayService, and
 * RBAC, admission and the audit log see them, not the server. The patch is guarded by the
 * resourceVersion it read (re-read and re-checked on a conflict) and writes the steering annotations
 * the operator honours, or, for rollback, the spec the operator recorded as the serving cluster's in
 * the service's own status (never anything read from a RayCluster). A verb that does not apply to the
 * current state is FAILED_PRECONDITION. `GetSteeringAccess` makes the same reviews and answers with
 * the verbs allowed.
 */
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError, type ServiceImpl } from '@connectrpc/connect';
import type { ResourceAttributes } from '../auth/access-reviewer';
import { retryOnConflict } from '../../runtime/kube/retry';
import type { KubeObject } from '../../runtime/kube/types';
import { ABORT_ANNOTATION, PAUSE_ANNOTATION, PROMOTE_ANNOTATION, RAYSHIFT_RAYSERVICE } from '../../runtime/rayservice/names';
import { asObject } from '../../spec/read';
import { scopeOf, type RequestScope } from '../auth/request-scope';
import { upgradeInFlight, upgradeStatusOf } from '../convert/upgrade-status';
import { requireValidRayService } from '../convert/validation';
import { SteeringAccessSchema, type RayServiceService, type SteerRayServiceRequest } from '../gen/rayshift/v1/rayservice_service_pb';
import { UpgradePhase, type UpgradeStatus } from '../gen/rayshift/v1/upgrade_pb';
import { kubeCall } from './kube-call';
import { recordedRevertingSpec } from './rollback-spec';

/** Annotation recording the last steering verb: `{verb, user, reason, time}` as JSON. */
export const LAST_STEERING_ANNOTATION = 'rayshift.dev/last-steering';

type SteeringImpl = Pick<
  ServiceImpl<typeof RayServiceService>,
  'getSteeringAccess' | 'pauseRayService' | 'resumeRayService' | 'promoteRayService' | 'abortRayService' | 'rollbackRayService'
>;

/** The steering verbs, in the order `GetSteeringAccess` lists them; each is also its RBAC subresource. */
export const STEERING_VERBS = ['pause', 'resume', 'promote', 'abort', 'rollback'] as const;

/** A steering verb's name (the RBAC subresource) and what it changes. */
type Verb = (typeof STEERING_VERBS)[number];

/** What a caller needs to be allowed for `verb` on a RayService: `update` on the virtual subresource. */
function steeringAttributes(verb: Verb, namespace: string, name: string): ResourceAttributes {
  return { group: 'rayshift.dev', resource: 'rayservices', subresource: verb, verb: 'update', namespace, name };
}

/** The write every verb makes as the caller: `patch` on the RayService itself. */
function patchAttributes(namespace: string, name: string): ResourceAttributes {
  return { group: 'rayshift.dev', resource: 'rayservices', verb: 'patch', namespace, name };
}

function refuse(message: string): never {
  throw new ConnectError(message, Code.FailedPrecondition);
}

/** Refuses a verb that needs an upgrade in flight (and no rollback running) when there is none. */
function requireForwardUpgrade(verb: Verb, u: UpgradeStatus): void {
  if (!upgradeInFlight(u)) refuse(`nothing to ${verb}: no upgrade is in flight`);
  if (u.phase === UpgradePhase.ROLLING_BACK) refuse(`cannot ${verb}: a rollback is already running`);
}

/** The merge patch that applies `verb` to `svc`, after checking that it applies. */
function patchFor(verb: Verb, svc: KubeObject): Record<string, unknown> {
  const u = upgradeStatusOf(svc);
  const spec = asObject(svc.spec);
  const annotations = svc.metadata.annotations ?? {};
  switch (verb) {
    case 'pause':
      if (asObject(spec.upgradeStrategy).type !== 'NewClusterWithIncrementalUpgrade') refuse('only incremental upgrades (NewClusterWithIncrementalUpgrade) can be paused');
      if (u.paused) refuse('the upgrade is already paused');
      return { metadata: { annotations: { [PAUSE_ANNOTATION]: 'true' } } };
    case 'resume':
      if (!u.paused) refuse('the upgrade is not paused');
      return {
        metadata: { annotations: { [PAUSE_ANNOTATION]: null } },
        ...(asObject(spec.rayshift).paused === true ? { spec: { rayshift: { paused: false } } } : {}),
      };
    case 'promote':
      requireForwardUpgrade(verb, u);
      if (annotations[PROMOTE_ANNOTATION] === 'true') refuse('a promotion is already requested');
      return { metadata: { annotations: { [PROMOTE_ANNOTATION]: 'true' } } };
    case 'abort':
      requireForwardUpgrade(verb, u);
      return { metadata: { annotations: { [ABORT_ANNOTATION]: 'true' } } };
    case 'rollback': {
      requireForwardUpgrade(verb, u);
      const revert = recordedRevertingSpec(svc, u.active!.cluster);
      if (!revert) refuse(`the operator has no record of the spec the serving cluster ${u.active!.cluster} runs (status.servingSpec); use :abort`);
      const { serveConfigV2, ...reverted } = { ...spec, ...revert };
      requireValidRayService({ ...svc, spec: serveConfigV2 === null ? reverted : { ...reverted, serveConfigV2 } }, 'rollback');
      return { spec: revert };
    }
  }
}

/** The steering handlers. */
export function rayServiceSteering(): SteeringImpl {
  async function steer(verb: Verb, req: SteerRayServiceRequest, scope: RequestScope): Promise<UpgradeStatus> {
    const subject = { kind: 'RayService', namespace: req.namespace, name: req.name };
    await scope.authorize(steeringAttributes(verb, req.namespace, req.name));
    // The operator writes status often, which moves the resourceVersion: re-read, re-check and retry on conflict.
    const patched = await kubeCall(subject, () =>
      retryOnConflict(async () => {
        const svc = await scope.kube.get(RAYSHIFT_RAYSERVICE, req.name, req.namespace);
        if (req.expectedGeneration !== 0n && BigInt(svc.metadata.generation ?? 0) !== req.expectedGeneration) {
          throw new ConnectError(`RayService ${req.name} is at generation ${svc.metadata.generation}, not ${req.expectedGeneration}`, Code.Aborted);
        }
        const patch = patchFor(verb, svc);
        const record = JSON.stringify({ verb, user: scope.caller.username, reason: req.reason, time: new Date().toISOString() });
        const metadata = asObject(patch.metadata);
        const body = {
          ...patch,
          metadata: { ...metadata, resourceVersion: svc.metadata.resourceVersion, annotations: { ...asObject(metadata.annotations), [LAST_STEERING_ANNOTATION]: record } },
        };
        return scope.kube.patchMerge(RAYSHIFT_RAYSERVICE, req.name, req.namespace, body);
      }),
    );
    return upgradeStatusOf(patched);
  }
  return {
    async getSteeringAccess(req, ctx) {
      const scope = scopeOf(ctx);
      // A verb is usable when both its subresource and the patch it makes are allowed.
      const [mayPatch, ...allowed] = await Promise.all([
        scope.allows(patchAttributes(req.namespace, req.name)),
        ...STEERING_VERBS.map((verb) => scope.allows(steeringAttributes(verb, req.namespace, req.name))),
      ]);
      return create(SteeringAccessSchema, { allowedVerbs: mayPatch ? STEERING_VERBS.filter((_, i) => allowed[i]) : [] });
    },
    pauseRayService: (req, ctx) => steer('pause', req, scopeOf(ctx)),
    resumeRayService: (req, ctx) => steer('resume', req, scopeOf(ctx)),
    promoteRayService: (req, ctx) => steer('promote', req, scopeOf(ctx)),
    abortRayService: (req, ctx) => steer('abort', req, scopeOf(ctx)),
    rollbackRayService: (req, ctx) => steer('rollback', req, scopeOf(ctx)),
  };
}
