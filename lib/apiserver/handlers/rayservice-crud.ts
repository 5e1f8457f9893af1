/**
 * RayService create, get, list, list-all, update, patch and delete, each made as the caller. Writes
 * run rayshift's checks first (every violation at once), `validate_only` adds a server-side dry run,
 * and `etag` (the resourceVersion) guards updates, patches and deletes; a patch without one retries
 * Kubernetes conflicts on a fresh read.
 */
import { Code, ConnectError, type ServiceImpl } from '@connectrpc/connect';
import { create, fromJson, toJson, type JsonObject } from '@bufbuild/protobuf';
import { EmptySchema } from '@bufbuild/protobuf/wkt';
import { retryOnConflict } from '../../runtime/kube/retry';
import type { KubeObject } from '../../runtime/kube/types';
import { scopeOf } from '../auth/request-scope';
import { rayServiceType } from '../convert/executor';
import { rayServiceFromKube, rayServiceToKube, specToKube } from '../convert/rayservice';
import { upgradeStatusOf } from '../convert/upgrade-status';
import { requireValidRayService } from '../convert/validation';
import { staleEtag, type Subject } from '../errors';
import { ListRayServicesResponseSchema, type RayServiceService } from '../gen/rayshift/v1/rayservice_service_pb';
import { RayServiceSchema, type RayService } from '../gen/rayshift/v1/rayservice_pb';
import { listAllNamespacesPage, listNamespacePage, pageRequest } from '../pagination';
import { requireFieldMask } from '../request-checks';
import type { HandlerDeps } from './deps';
import { authorizeVerb, kubeCall, rayServiceSubject, readRayService } from './kube-call';

type CrudImpl = Pick<
  ServiceImpl<typeof RayServiceService>,
  'createRayService' | 'getRayService' | 'listRayServices' | 'listAllRayServices' | 'updateRayService' | 'patchRayService' | 'deleteRayService'
>;

/** The API message of an object as read. */
function message(obj: KubeObject): RayService {
  return rayServiceFromKube(obj, upgradeStatusOf(obj));
}

function required<T>(value: T | undefined, field: string): T {
  if (value === undefined) throw new ConnectError(`${field} is required`, Code.InvalidArgument);
  return value;
}

/** Fields of a RayService that `update_mask` may name (top level). */
const PATCHABLE = ['spec', 'labels', 'annotations'] as const;

/**
 * The current object, unless the caller's etag is not its resourceVersion: ABORTED before writing,
 * so an etag that is not a resourceVersion at all gets the same answer as a stale one.
 */
function requireEtag(current: KubeObject, etag: string, subject: Subject): KubeObject {
  if (etag && etag !== current.metadata.resourceVersion) throw staleEtag(subject);
  return current;
}

/** Copies the fields named by `paths` (proto names, dotted; checked by `requireFieldMask`) from `source` to `target` (JSON with proto names). */
function applyMask(target: JsonObject, source: JsonObject, paths: readonly string[]): void {
  for (const path of paths) {
    const parts = path.split('.');
    let from: unknown = source;
    let to = target;
    for (const [i, part] of parts.entries()) {
      const last = i === parts.length - 1;
      from = from && typeof from === 'object' ? (from as JsonObject)[part] : undefined;
      if (last) {
        if (from === undefined) delete to[part];
        else to[part] = from as JsonObject[string];
      } else {
        const next = to[part];
        to = (to[part] = next && typeof next === 'object' && !Array.isArray(next) ? next : {}) as JsonObject;
      }
    }
  }
}

/** The RayService CRUD handlers. */
export function rayServiceCrud(deps: HandlerDeps): CrudImpl {
  return {
    async createRayService(req, ctx) {
      const scope = scopeOf(ctx);
      const { kube } = scope;
      const svc = required(req.rayService, 'ray_service');
      // validate_only needs the right to create too: checks and a dry run are work done for the caller.
      await authorizeVerb(scope, rayServiceType(svc.executor), 'create', req.namespace);
      if (svc.namespace && svc.namespace !== req.namespace) {
        throw new ConnectError(`ray_service.namespace ${svc.namespace} differs from the request's namespace ${req.namespace}`, Code.InvalidArgument);
      }
      const obj = rayServiceToKube({ ...svc, etag: '' }, req.namespace);
      requireValidRayService(obj, 'ray_service');
      const subject = { kind: 'RayService', namespace: req.namespace, name: svc.name };
      return message(await kubeCall(subject, () => kube.create(obj, { dryRun: req.validateOnly })));
    },

    async getRayService(req, ctx) {
      const { kube } = scopeOf(ctx);
      return message(await readRayService(kube, req, req.executor));
    },

    async listRayServices(req, ctx) {
      const { kube, caller } = scopeOf(ctx);
      const page = await kubeCall({ kind: 'RayService', namespace: req.namespace }, () => listNamespacePage(kube, rayServiceType(req.executor), req.namespace, pageRequest(req, caller)));
      return create(ListRayServicesResponseSchema, { rayServices: page.items.map(message), nextPageToken: page.nextPageToken });
    },

    async listAllRayServices(req, ctx) {
      const { kube, caller } = scopeOf(ctx);
      const page = await kubeCall({ kind: 'RayService' }, () => listAllNamespacesPage(kube, deps.server, rayServiceType(req.executor), pageRequest(req, caller)));
      return create(ListRayServicesResponseSchema, { rayServices: page.items.map(message), nextPageToken: page.nextPageToken });
    },

    async updateRayService(req, ctx) {
      const scope = scopeOf(ctx);
      const { kube } = scope;
      const svc = required(req.rayService, 'ray_service');
      await authorizeVerb(scope, rayServiceType(svc.executor), 'update', req.namespace, req.name);
      const subject = rayServiceSubject(req);
      const current = requireEtag(await readRayService(kube, req, svc.executor), svc.etag, subject);
      const next: KubeObject = {
        ...current,
        metadata: { ...current.metadata, labels: { ...svc.labels }, annotations: { ...svc.annotations }, resourceVersion: svc.etag || current.metadata.resourceVersion },
        spec: specToKube(svc.spec),
      };
      requireValidRayService(next, 'ray_service');
      return message(await kubeCall(subject, () => kube.update(next, { dryRun: req.validateOnly })));
    },

    async patchRayService(req, ctx) {
      const scope = scopeOf(ctx);
      const { kube } = scope;
      const svc = required(req.rayService, 'ray_service');
      // The patch is written as an update (PUT) of the merged object: that is the verb RBAC sees.
      await authorizeVerb(scope, rayServiceType(svc.executor), 'update', req.namespace, req.name);
      const paths = required(req.updateMask, 'update_mask').paths;
      requireFieldMask(RayServiceSchema, paths, PATCHABLE);
      const subject = rayServiceSubject(req);
      const readAndWrite = async (): Promise<KubeObject> => {
        const current = requireEtag(await kube.get(rayServiceType(svc.executor), req.name, req.namespace), svc.etag, subject);
        const merged = toJson(RayServiceSchema, message(current), { useProtoFieldName: true }) as JsonObject;
        applyMask(merged, toJson(RayServiceSchema, svc, { useProtoFieldName: true }) as JsonObject, paths);
        const patched = fromJson(RayServiceSchema, merged);
        const next: KubeObject = {
          ...current,
          metadata: { ...current.metadata, labels: { ...patched.labels }, annotations: { ...patched.annotations }, resourceVersion: svc.etag || current.metadata.resourceVersion },
          spec: specToKube(patched.spec),
        };
        requireValidRayService(next, 'ray_service');
        return kube.update(next, { dryRun: req.validateOnly });
      };
      // With an etag, a conflict is the caller's to resolve (ABORTED). Without one, the masked fields
      // are the whole change: a conflict (typically the operator writing status between the read and
      // the write) is retried on a fresh read, as the steering verbs do.
      return message(await kubeCall(subject, () => (svc.etag ? readAndWrite() : retryOnConflict(readAndWrite))));
    },

    async deleteRayService(req, ctx) {
      const { kube } = scopeOf(ctx);
      const subject = rayServiceSubject(req);
      await kubeCall(subject, () => kube.delete(rayServiceType(req.executor), req.name, req.namespace, req.etag ? { preconditions: { resourceVersion: req.etag } } : {}));
      return create(EmptySchema);
    },
  };
}
