/**
 * `pulumi destroy` of a RayService run by the Pulumi executor: there is no controller (and,
 * outside a full cluster, maybe no garbage collector), so the provider deletes what the record
 * owns itself, traffic first: route, Gateway, Services, RayClusters with their serve Services,
 * then the record.
 */
import { KubeClient } from '../runtime/kube/client';
import { KnownTypes, KubeObject, ResourceType } from '../runtime/kube/types';
import { GATEWAY, GRPCROUTE, HTTPROUTE, RAYCLUSTER, SERVICE } from '../spec/object-names';
import { recordName } from './record-name';
import { readRecord } from './service-record';

/** Kinds the record may own, in deletion order (traffic first). */
const OWNED_KINDS: readonly ResourceType[] = [HTTPROUTE, GRPCROUTE, GATEWAY, SERVICE, RAYCLUSTER];

/** Deletes everything the record of `namespace/name` owns, then the record; returns the objects deleted. */
export async function tearDown(client: KubeClient, namespace: string, name: string): Promise<string[]> {
  const record = await readRecord(client, namespace, name);
  if (!record) return [];
  const owners = new Set([String(record.metadata.uid)]);
  const deleted: string[] = [];
  const remove = async (type: ResourceType, obj: KubeObject) => {
    if (await client.delete(type, String(obj.metadata.name), namespace, { propagationPolicy: 'Background', ignoreNotFound: true })) {
      deleted.push(`${type.kind}/${obj.metadata.name}`);
    }
  };
  for (const type of OWNED_KINDS) {
    for (const obj of (await client.listAll(type, { namespace })).items) {
      if ((obj.metadata.ownerReferences ?? []).some((o) => owners.has(o.uid))) {
        await remove(type, obj);
        if (type === RAYCLUSTER) owners.add(String(obj.metadata.uid));
      }
    }
  }
  // The clusters' own serve Services (owned by a cluster, found once the clusters are known).
  for (const svc of (await client.listAll(SERVICE, { namespace })).items) {
    if ((svc.metadata.ownerReferences ?? []).some((o) => owners.has(o.uid))) await remove(SERVICE, svc);
  }
  await client.delete(KnownTypes.ConfigMap, recordName(name), namespace, { ignoreNotFound: true, preconditions: { uid: record.metadata.uid } });
  deleted.push(`ConfigMap/${recordName(name)}`);
  return deleted;
}
