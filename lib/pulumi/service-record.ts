/**
 * The Pulumi executor's `RayServiceStore`. With no rayshift CRD in the cluster, a RayService run
 * by `pulumi up` lives in a ConfigMap `<name>-rayshift` (its record): `data.spec` holds the
 * `rayshift.dev/v1alpha1` spec, `data.status` the status the reconciler writes (engine state
 * included) and `data.generation` a counter bumped on each spec change. The record is also the
 * crash checkpoint: an interrupted `pulumi up` resumes from it on the next run.
 *
 * The reconciler sees the record as the `rayshift.dev/v1alpha1` RayService it stands for (so the
 * model validates the same extensions as for the operator) with the ConfigMap's uid, and the
 * store's owner reference names the ConfigMap, so clusters, Services, Gateway and route are owned
 * by an object that exists and Kubernetes' garbage collector never sees a dangling owner.
 */
import { KubeClient } from '../runtime/kube/client';
import { isNotFound } from '../runtime/kube/errors';
import { KnownTypes, KubeObject } from '../runtime/kube/types';
import { controllerRef } from '../runtime/rayservice/resources';
import { RayServiceStore } from '../runtime/rayservice/store';
import { RAYSHIFT_API_VERSION, RayServiceSpec } from '../spec/rayservice';
import { RECORD_LABEL, recordName } from './record-name';

/** The record's ConfigMap as a `rayshift.dev/v1alpha1` RayService (what the reconciler works on). */
export function serviceOfRecord(record: KubeObject, service: string): KubeObject {
  const data = (record.data ?? {}) as Record<string, string>;
  return {
    apiVersion: RAYSHIFT_API_VERSION,
    kind: 'RayService',
    metadata: {
      name: service,
      namespace: record.metadata.namespace,
      uid: record.metadata.uid,
      resourceVersion: record.metadata.resourceVersion,
      generation: Number(data.generation ?? '1'),
      labels: Object.fromEntries(Object.entries(record.metadata.labels ?? {}).filter(([k]) => k !== RECORD_LABEL)),
      annotations: record.metadata.annotations ?? {},
    },
    spec: JSON.parse(data.spec ?? '{}') as unknown,
    status: JSON.parse(data.status ?? '{}') as unknown,
  };
}

/** Reads the record of `service`, or undefined when it does not exist; throws when the ConfigMap is not a record. */
export async function readRecord(client: KubeClient, namespace: string, service: string): Promise<KubeObject | undefined> {
  const record = await client.tryGet(KnownTypes.ConfigMap, recordName(service), namespace);
  if (record && record.metadata.labels?.[RECORD_LABEL] !== service) {
    throw new Error(`ConfigMap ${namespace}/${recordName(service)} exists and is not the rayshift record of RayService ${service} (label ${RECORD_LABEL}=${service} missing); rename the service or remove the ConfigMap`);
  }
  return record;
}

/**
 * Creates the record of `service` with `spec`, or updates the spec of the existing one (bumping
 * its generation when the spec changed); the status, and so the migration's progress, is kept.
 */
export async function writeRecordSpec(client: KubeClient, namespace: string, service: string, spec: RayServiceSpec, labels: Readonly<Record<string, string>> = {}): Promise<KubeObject> {
  const text = JSON.stringify(spec);
  const existing = await readRecord(client, namespace, service);
  if (!existing) {
    return client.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: recordName(service), namespace, labels: { ...labels, [RECORD_LABEL]: service } },
      data: { spec: text, status: '{}', generation: '1' },
    });
  }
  const data = (existing.data ?? {}) as Record<string, string>;
  if (data.spec === text) return existing;
  return client.patchMerge(KnownTypes.ConfigMap, recordName(service), namespace, {
    metadata: { resourceVersion: existing.metadata.resourceVersion },
    data: { spec: text, generation: String(Number(data.generation ?? '1') + 1) },
  });
}

/** Sets (`"true"`) or removes (`undefined`) a steering annotation (pause, abort) on the record. */
export async function setRecordAnnotation(client: KubeClient, namespace: string, service: string, annotation: string, value: 'true' | undefined): Promise<void> {
  await client.patchMerge(KnownTypes.ConfigMap, recordName(service), namespace, { metadata: { annotations: { [annotation]: value ?? null } } });
}

/** The store over records: no finalizer (`pulumi destroy` tears down), status as a merge patch of `data.status`, the record as owner. */
export function recordStore(client: KubeClient): RayServiceStore {
  return {
    usesFinalizer: false,
    async get(namespace, name) {
      const record = await readRecord(client, namespace, name);
      return record ? serviceOfRecord(record, name) : undefined;
    },
    async writeStatus(svc, status) {
      try {
        await client.patchMerge(KnownTypes.ConfigMap, recordName(String(svc.metadata.name)), String(svc.metadata.namespace), { data: { status: JSON.stringify(status) } });
        return true;
      } catch (err) {
        if (isNotFound(err)) return false;
        throw err;
      }
    },
    async patchMetadata(svc, ops) {
      await client.patchJson(KnownTypes.ConfigMap, recordName(String(svc.metadata.name)), String(svc.metadata.namespace), ops);
    },
    ownerReference(svc) {
      return controllerRef({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: recordName(String(svc.metadata.name)), uid: svc.metadata.uid } });
    },
  };
}
