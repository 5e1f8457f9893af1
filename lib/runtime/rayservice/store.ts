/**
 * Where a RayService's spec is read from and its status written to, and which object owns what the
 * reconciler creates for it. The operator keeps both on the `rayshift.dev/v1alpha1` RayService
 * (status subresource), which owns its objects; the Pulumi dynamic provider, which has no CRD in
 * the cluster, keeps them in an object of its own, which owns them. The reconciler is the same.
 */
import { isNotFound } from '../kube/errors';
import { ObjectReader } from '../kube/object-reader';
import { KubeObject, OwnerReference } from '../kube/types';
import { JsonPatchOp } from '../route/types';
import { RAYSHIFT_RAYSERVICE } from '../../spec/object-names';
import type { RayServiceKube } from './ports';
import { controllerRef } from './resources';

/** The service record a reconciler works on. */
export interface RayServiceStore {
  /**
   * The service as an object: `spec` (the RayService spec), `status` (as last written),
   * `metadata` with `uid` (that of its `ownerReference`), `generation`, `resourceVersion`,
   * `annotations` (steering) and, when the store uses one, `finalizers` / `deletionTimestamp`.
   */
  get(namespace: string, name: string): Promise<KubeObject | undefined>;
  /** Replaces the status; false when the service is gone. */
  writeStatus(svc: KubeObject, status: Record<string, unknown>): Promise<boolean>;
  /** JSON-patches the service's metadata (finalizers, spent steering annotations). */
  patchMetadata(svc: KubeObject, ops: readonly JsonPatchOp[]): Promise<void>;
  /**
   * The controller reference the reconciler puts on the RayClusters, Services, Gateway and route it
   * creates for `svc`, naming the object that holds the service; its clusters are those with a
   * controller reference of that uid.
   */
  ownerReference(svc: KubeObject): OwnerReference;
  /** Deletion is guarded by rayshift's finalizer, which the reconciler adds and releases. */
  readonly usesFinalizer: boolean;
}

/** The operator's store: `rayshift.dev/v1alpha1` RayServices, status through server-side apply. */
export function rayshiftServiceStore(client: Pick<RayServiceKube, 'applyStatus' | 'patchJson'>, reader: ObjectReader): RayServiceStore {
  return {
    usesFinalizer: true,
    get: (namespace, name) => reader.tryGet(RAYSHIFT_RAYSERVICE, name, namespace),
    async writeStatus(svc, status) {
      try {
        reader.wrote(await client.applyStatus(
          { apiVersion: svc.apiVersion, kind: svc.kind, metadata: { name: svc.metadata.name, namespace: svc.metadata.namespace }, status },
          { force: true },
        ));
        return true;
      } catch (err) {
        if (isNotFound(err)) return false;
        throw err;
      }
    },
    async patchMetadata(svc, ops) {
      reader.wrote(await client.patchJson(RAYSHIFT_RAYSERVICE, String(svc.metadata.name), String(svc.metadata.namespace), ops));
    },
    ownerReference: controllerRef,
  };
}
