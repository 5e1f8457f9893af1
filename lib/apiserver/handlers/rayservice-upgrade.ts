/**
 * Upgrade status, the dry-run plan and the progress watch of a RayService, read as the caller (the
 * plan of a proposed spec needs the right to update the RayService, reviewed before anything else). The
 * watch follows the object with a Kubernetes watch (resuming from the last resourceVersion when the
 * server closes it), sends a heartbeat when nothing changes, re-checks the caller's token on a fixed
 * schedule whether or not events flow (ending with UNAUTHENTICATED once it fails), keeps the caller's
 * Kubernetes client open while it runs, and ends once an upgrade it saw in flight is over, or when the
 * service is deleted. A caller has at most `maxWatchesPerCaller` watches open at once.
 */
import { Code, ConnectError, type ServiceImpl } from '@connectrpc/connect';
import { create, equals } from '@bufbuild/protobuf';
import { resolveUpgradeOptions } from '../../spec/rayservice';
import { planRayService } from '../../engine/plan-rayservice';
import type { RawWatchEvent } from '../../runtime/kube/request-options';
import { KubeApiError, asStatus } from '../../runtime/kube/errors';
import type { KubeObject } from '../../runtime/kube/types';
import type { RayServiceSpec } from '../../spec/rayservice';
import { AsyncQueue } from '../async-queue';
import { limitValue } from '../server-limits';
import { WatchSlots } from '../watch-slots';
import { invalidArgument, toConnectError, type Subject } from '../errors';
import { scopeOf } from '../auth/request-scope';
import { rayServiceType } from '../convert/executor';
import { specToKube } from '../convert/rayservice';
import { upgradeInFlight, upgradeStatusOf } from '../convert/upgrade-status';
import { requireValidRayService } from '../convert/validation';
import type { RayServiceService } from '../gen/rayshift/v1/rayservice_service_pb';
import { UpgradeEventType, UpgradePhase, UpgradePlanSchema, UpgradeStatusSchema, type UpgradeStatus } from '../gen/rayshift/v1/upgrade_pb';
import { authorizeVerb, kubeCall, rayServiceSubject, readRayService } from './kube-call';

type UpgradeImpl = Pick<ServiceImpl<typeof RayServiceService>, 'getUpgradeStatus' | 'planRayService' | 'watchUpgrade'>;

/** Options of the upgrade handlers. */
export interface UpgradeHandlerOptions {
  /** Default seconds between heartbeats of a watch; default 15. */
  readonly heartbeatSeconds?: number;
  /** Seconds between re-checks of a watching caller's token; default `SERVER_LIMITS.tokenRecheckSeconds`. */
  readonly tokenRecheckSeconds?: number;
  /** Watches one caller may have open at once; default `SERVER_LIMITS.maxWatchesPerCaller`. */
  readonly maxWatchesPerCaller?: number;
}

/** The largest `heartbeat_seconds` a caller may ask for (Node timers overflow past 2^31 ms). */
export const MAX_HEARTBEAT_SECONDS = 3600;

/** Equal statuses apart from the resourceVersion they were read at. */
function sameProgress(a: UpgradeStatus, b: UpgradeStatus): boolean {
  return equals(UpgradeStatusSchema, create(UpgradeStatusSchema, { ...a, resourceVersion: '' }), create(UpgradeStatusSchema, { ...b, resourceVersion: '' }));
}

/** The RayService upgrade handlers. */
export function rayServiceUpgrade(opts: UpgradeHandlerOptions = {}): UpgradeImpl {
  const slots = new WatchSlots(limitValue('maxWatchesPerCaller', opts.maxWatchesPerCaller));
  const recheckMs = limitValue('tokenRecheckSeconds', opts.tokenRecheckSeconds) * 1000;
  return {
    async getUpgradeStatus(req, ctx) {
      const { kube } = scopeOf(ctx);
      return upgradeStatusOf(await readRayService(kube, req, req.executor));
    },

    async planRayService(req, ctx) {
      const scope = scopeOf(ctx);
      // A plan of a proposed spec is the dry run of an update to it: the caller needs that update's
      // right before the proposed spec (its Serve config above all) is converted or parsed. The plan
      // of the stored spec needs the right to read it.
      await authorizeVerb(scope, rayServiceType(req.executor), req.proposed ? 'update' : 'get', req.namespace, req.name);
      const current = await readRayService(scope.kube, req, req.executor);
      const target: KubeObject = req.proposed ? { ...current, spec: specToKube(req.proposed) } : current;
      requireValidRayService(target, 'proposed', true);
      const plan = planRayService({ kind: 'RayService', name: req.name, options: resolveUpgradeOptions(target.spec as unknown as RayServiceSpec) });
      return create(UpgradePlanSchema, {
        strategy: plan.strategy,
        steps: plan.steps.map((s) => ({ ...s })),
        durationSeconds: plan.durationSeconds,
        peakCapacityPercent: plan.peakCapacityPercent,
        outcome: plan.outcome,
        oldClusterDeletedAtSeconds: plan.oldClusterDeletedAtSeconds,
        // The engine's dip as it is (lib/engine/plan-rayservice.ts, `dipOf`); absent when the plan has none.
        dip: plan.dip,
      });
    },

    async *watchUpgrade(req, ctx) {
      const scope = scopeOf(ctx);
      const type = rayServiceType(req.executor);
      const subject = rayServiceSubject(req);
      if (req.heartbeatSeconds < 0 || req.heartbeatSeconds > MAX_HEARTBEAT_SECONDS) {
        const description = `must be between 0 (the server's default) and ${MAX_HEARTBEAT_SECONDS} seconds; got ${req.heartbeatSeconds}`;
        throw invalidArgument(`heartbeat_seconds ${description}`, [{ field: 'heartbeat_seconds', description }]);
      }
      const heartbeatMs = Math.max(1, req.heartbeatSeconds || opts.heartbeatSeconds || 15) * 1000;
      // Before the Kubernetes watch is opened: a caller over the cap costs the cluster nothing.
      const releaseSlot = slots.acquire(scope.caller);
      const release = scope.keepAlive();
      // A failed re-check fails the current pass's queue, which ends the stream with its error.
      let queue: AsyncQueue<RawWatchEvent> | undefined;
      let revoked: unknown;
      const recheck = setInterval(() => {
        scope.revalidate().catch((e: unknown) => {
          // Only a refused token ends the stream; an unavailable TokenReview is tried again next time.
          if (ConnectError.from(e).code !== Code.Unauthenticated) return;
          revoked ??= e;
          queue?.fail(e);
        });
      }, recheckMs);
      try {
        const initial = await readRayService(scope.kube, req, req.executor);
        let last = upgradeStatusOf(initial);
        let seenInFlight = upgradeInFlight(last);
        let resourceVersion = req.resourceVersion || String(initial.metadata.resourceVersion);
        yield { type: UpgradeEventType.SNAPSHOT, status: last };
        // Each pass opens one Kubernetes watch; it ends when the server closes it (then resumes) or the call is cancelled.
        while (!ctx.signal.aborted) {
          if (revoked) throw revoked;
          const passQueue = new AsyncQueue<RawWatchEvent>();
          queue = passQueue;
          const handle = await kubeCall(subject, () =>
            scope.kube.watchStream(type, { namespace: req.namespace, fieldSelector: `metadata.name=${req.name}`, resourceVersion }, (e) => passQueue.push(e)),
          );
          handle.done.then(() => passQueue.end(), (e: unknown) => passQueue.fail(e));
          const stop = () => handle.abort();
          ctx.signal.addEventListener('abort', stop);
          // A client gone while the watch was opening: no abort event comes any more, and the watch
          // (its Kubernetes watch and the caller's slot) would be held until the next heartbeat.
          if (ctx.signal.aborted) stop();
          try {
            for (;;) {
              const next = await passQueue.next(heartbeatMs);
              if (next.kind === 'end') break;
              if (next.kind === 'timeout') {
                yield { type: UpgradeEventType.HEARTBEAT, status: last };
                continue;
              }
              const event = next.item;
              if (event.type === 'ERROR') {
                const status = asStatus(event.object);
                if (status?.code === 410) {
                  resourceVersion = String((await readRayService(scope.kube, req, req.executor)).metadata.resourceVersion);
                  break;
                }
                throw new KubeApiError({ statusCode: status?.code ?? 500, reason: status?.reason, method: 'WATCH', path: '' });
              }
              resourceVersion = String(event.object.metadata.resourceVersion ?? resourceVersion);
              if (event.type === 'BOOKMARK') continue;
              if (event.type === 'DELETED') {
                yield { type: UpgradeEventType.DELETED, status: last };
                return;
              }
              const status = upgradeStatusOf(event.object);
              const changed = !sameProgress(status, last);
              last = status;
              if (upgradeInFlight(status)) seenInFlight = true;
              else if (seenInFlight && status.observedGeneration >= status.generation) {
                yield { type: UpgradeEventType.COMPLETED, status: create(UpgradeStatusSchema, { ...status, phase: UpgradePhase.COMPLETE }) };
                return;
              }
              if (changed) yield { type: UpgradeEventType.PROGRESS, status };
            }
          } catch (e) {
            throw ctx.signal.aborted ? new ConnectError('the watch was cancelled', Code.Canceled) : toWatchError(e, subject);
          } finally {
            ctx.signal.removeEventListener('abort', stop);
            handle.abort();
          }
        }
      } finally {
        clearInterval(recheck);
        release();
        releaseSlot();
      }
    },
  };
}

function toWatchError(e: unknown, subject: Subject): ConnectError {
  if (e instanceof ConnectError || e instanceof KubeApiError) return toConnectError(e, subject);
  return new ConnectError('the watch of the Kubernetes API failed', Code.Unavailable);
}
