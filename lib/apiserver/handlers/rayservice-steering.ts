/**
 * Steering verbs of operator-executed RayServices: pause, resume, promote, abort, rollback,
 * retry-analysis and skip-analysis. The caller's right to the verb is checked with a
 * SubjectAccessReview on the virtual subresource (`rayservices/<verb>`, e.g.
 * `rayservices/retry-analysis`, verb `update`, group `rayshift.dev`); the service is then read and patched
 * **as the caller** (impersonated), so the caller also needs `get` and `patch` on the RayService, and
 * RBAC, admission and the audit log see them, not the server. The patch is guarded by the
 * resourceVersion it read (re-read and re-checked on a conflict) and writes the steering annotations
 * the operator honours, or, for rollback, the spec the operator recorded as the serving cluster's in
 * the service's own status (never anything read from a RayCluster). Which verb applies and the patch
 * it makes are the steering rules' (lib/engine/steering.ts, shared with the CLI and the dashboard);
 * a verb that does not apply is FAILED_PRECONDITION. `GetSteeringAccess` answers with the verbs
 * allowed, reviewing the patch first (refused: no verb is reviewed) and each right for the whole
 * namespace before the one name (cached per caller and namespace, so a caller with rights costs no
 * review for the next name, one without them one review per new name: 8 before).
 */
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError, type ServiceImpl } from '@connectrpc/connect';
import type { ResourceAttributes } from '../auth/access-reviewer';
import { retryOnConflict } from '../../runtime/kube/retry';
import type { KubeObject } from '../../runtime/kube/types';
import { RAYSHIFT_RAYSERVICE } from '../../spec/object-names';
import { STEERING_VERBS, steeringPatch, steeringRefusal, steeringStateOf, type SteeringRecord, type SteeringVerb } from '../../engine/steering';
import { asObject } from '../../spec/read';
import { scopeOf, type RequestScope } from '../auth/request-scope';
import { upgradeStatusOf } from '../convert/upgrade-status';
import { requireValidRayService } from '../convert/validation';
import { SteeringAccessSchema, type RayServiceService, type SteerRayServiceRequest } from '../gen/rayshift/v1/rayservice_service_pb';
import type { UpgradeStatus } from '../gen/rayshift/v1/upgrade_pb';
import { kubeCall, rayServiceSubject } from './kube-call';
import { recordedRevertingSpec } from './rollback-spec';

type SteeringImpl = Pick<
  ServiceImpl<typeof RayServiceService>,
  | 'getSteeringAccess'
  | 'pauseRayService'
  | 'resumeRayService'
  | 'promoteRayService'
  | 'abortRayService'
  | 'rollbackRayService'
  | 'retryAnalysisRayService'
  | 'skipAnalysisRayService'
>;

/** What a caller needs to be allowed for `verb` on a RayService: `update` on the virtual subresource. */
function steeringAttributes(verb: SteeringVerb, namespace: string, name: string): ResourceAttributes {
  return { group: 'rayshift.dev', resource: 'rayservices', subresource: verb, verb: 'update', namespace, name };
}

/** The write every verb makes as the caller: `patch` on the RayService itself. */
function patchAttributes(namespace: string, name: string): ResourceAttributes {
  return { group: 'rayshift.dev', resource: 'rayservices', verb: 'patch', namespace, name };
}

/**
 * Whether the caller may act on `attributes` (which name one object): first asked for every object
 * of the namespace, an answer the review cache keeps for every name, then, when that is refused, for
 * the one name (a rule may list `resourceNames`). RBAC allows a request without a name only by rules
 * without `resourceNames`, which allow every name too, so a yes for the namespace is a yes for the name.
 */
async function allowsByName(scope: RequestScope, attributes: ResourceAttributes): Promise<boolean> {
  const { name, ...anyName } = attributes;
  return (await scope.allows(anyName)) || (name !== undefined && scope.allows(attributes));
}

function refuse(message: string): never {
  throw new ConnectError(message, Code.FailedPrecondition);
}

/**
 * The merge patch that applies `verb` to `svc` with `record` (guarded by the resourceVersion read),
 * after the steering rules (lib/engine/steering.ts) said it applies; rollback adds the serving
 * cluster's recorded spec, which only the server recovers.
 */
function patchFor(verb: SteeringVerb, svc: KubeObject, record: SteeringRecord): Record<string, unknown> {
  const state = steeringStateOf(svc);
  const refusal = steeringRefusal(verb, state);
  if (refusal !== undefined) refuse(refusal);
  const patch = steeringPatch(verb, state, record);
  const metadata = { ...patch.metadata, resourceVersion: svc.metadata.resourceVersion };
  if (verb !== 'rollback') return { ...patch, metadata };
  const active = upgradeStatusOf(svc).active?.cluster ?? '';
  const revert = recordedRevertingSpec(svc, active);
  if (!revert) refuse(`the operator has no record of the spec the serving cluster ${active} runs (status.servingSpec); use :abort`);
  const { serveConfigV2, ...reverted } = { ...asObject(svc.spec), ...revert };
  requireValidRayService({ ...svc, spec: serveConfigV2 === null ? reverted : { ...reverted, serveConfigV2 } }, 'rollback');
  return { metadata, spec: revert };
}

/** The steering handlers. */
export function rayServiceSteering(): SteeringImpl {
  async function steer(verb: SteeringVerb, req: SteerRayServiceRequest, scope: RequestScope): Promise<UpgradeStatus> {
    const subject = rayServiceSubject(req);
    await scope.authorize(steeringAttributes(verb, req.namespace, req.name));
    // The operator writes status often, which moves the resourceVersion: re-read, re-check and retry on conflict.
    const patched = await kubeCall(subject, () =>
      retryOnConflict(async () => {
        const svc = await scope.kube.get(RAYSHIFT_RAYSERVICE, req.name, req.namespace);
        if (req.expectedGeneration !== 0n && BigInt(svc.metadata.generation ?? 0) !== req.expectedGeneration) {
          throw new ConnectError(`RayService ${req.name} is at generation ${svc.metadata.generation}, not ${req.expectedGeneration}`, Code.Aborted);
        }
        const record = { verb, user: scope.caller.username, reason: req.reason, time: new Date().toISOString() };
        return scope.kube.patchMerge(RAYSHIFT_RAYSERVICE, req.name, req.namespace, patchFor(verb, svc, record));
      }),
    );
    return upgradeStatusOf(patched);
  }
  return {
    async getSteeringAccess(req, ctx) {
      const scope = scopeOf(ctx);
      // A verb is usable when both its subresource and the patch it makes are allowed: without the
      // patch none is, and the verbs are not reviewed at all.
      if (!(await allowsByName(scope, patchAttributes(req.namespace, req.name)))) return create(SteeringAccessSchema, { allowedVerbs: [] });
      const allowed = await Promise.all(STEERING_VERBS.map((verb) => allowsByName(scope, steeringAttributes(verb, req.namespace, req.name))));
      return create(SteeringAccessSchema, { allowedVerbs: STEERING_VERBS.filter((_, i) => allowed[i]) });
    },
    pauseRayService: (req, ctx) => steer('pause', req, scopeOf(ctx)),
    resumeRayService: (req, ctx) => steer('resume', req, scopeOf(ctx)),
    promoteRayService: (req, ctx) => steer('promote', req, scopeOf(ctx)),
    abortRayService: (req, ctx) => steer('abort', req, scopeOf(ctx)),
    rollbackRayService: (req, ctx) => steer('rollback', req, scopeOf(ctx)),
    retryAnalysisRayService: (req, ctx) => steer('retry-analysis', req, scopeOf(ctx)),
    skipAnalysisRayService: (req, ctx) => steer('skip-analysis', req, scopeOf(ctx)),
  };
}
