/**
 * PatchRayService against a fake Kubernetes client whose first write conflicts (409, as when the
 * operator writes status between the handler's read and write): without an etag the patch is
 * re-read and re-applied; with one the conflict is the caller's (ABORTED).
 */
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError, createContextValues, createHandlerContext } from '@connectrpc/connect';
import { REQUEST_SCOPE, type RequestScope } from '../../lib/apiserver/auth/request-scope';
import { PatchRayServiceRequestSchema, RayServiceService } from '../../lib/apiserver/gen/rayshift/v1/rayservice_service_pb';
import { rayServiceCrud } from '../../lib/apiserver/handlers/rayservice-crud';
import type { KubeClient } from '../../lib/runtime/kube/client';
import { KubeApiError } from '../../lib/runtime/kube/errors';
import type { KubeObject } from '../../lib/runtime/kube/types';
import { rayService } from '../support/operator-env';

/** A client holding one RayService whose resourceVersion moves on every write; `conflicts` writes fail with 409 first. */
function fakeKube(conflicts: number) {
  let stored: KubeObject = { ...rayService('ns', 'svc'), metadata: { name: 'svc', namespace: 'ns', resourceVersion: '10', generation: 1 } };
  const writes: KubeObject[] = [];
  let reads = 0;
  const kube = {
    async get() {
      reads++;
      return structuredClone(stored);
    },
    async update(obj: KubeObject) {
      writes.push(obj);
      if (writes.length <= conflicts) {
        // The operator's status write won the race.
        stored = { ...stored, metadata: { ...stored.metadata, resourceVersion: String(Number(stored.metadata.resourceVersion) + 1) } };
        throw new KubeApiError({ statusCode: 409, reason: 'Conflict', message: 'the object has been modified', method: 'PUT', path: '/apis/rayshift.dev/v1alpha1/namespaces/ns/rayservices/svc' });
      }
      if (obj.metadata.resourceVersion !== stored.metadata.resourceVersion) throw new Error(`written at stale resourceVersion ${obj.metadata.resourceVersion}`);
      stored = { ...obj, metadata: { ...obj.metadata, resourceVersion: String(Number(stored.metadata.resourceVersion) + 1) } };
      return structuredClone(stored);
    },
  };
  return { kube: kube as unknown as KubeClient, writes, reads: () => reads };
}

function contextFor(kube: KubeClient) {
  const scope: RequestScope = { caller: { username: 'alice', groups: [], extra: {} }, kube, authorize: async () => undefined, allows: async () => true, revalidate: async () => undefined, keepAlive: () => () => undefined };
  return createHandlerContext({
    service: RayServiceService,
    method: RayServiceService.method.patchRayService,
    protocolName: 'connect',
    requestMethod: 'POST',
    url: 'http://localhost/rayshift.v1.RayServiceService/PatchRayService',
    contextValues: createContextValues().set(REQUEST_SCOPE, scope),
  });
}

const patchLabels = (etag: string) => create(PatchRayServiceRequestSchema, { namespace: 'ns', name: 'svc', rayService: { labels: { team: 'a' }, etag }, updateMask: { paths: ['labels'] } });

test('without an etag, a conflicting write is re-read and re-applied', async () => {
  const fake = fakeKube(1);
  const crud = rayServiceCrud({ server: fake.kube });
  const patched = await crud.patchRayService(patchLabels(''), contextFor(fake.kube));
  expect(patched).toMatchObject({ labels: { team: 'a' }, etag: '12' });
  expect(fake.reads()).toBe(2);
  expect(fake.writes.map((w) => w.metadata.resourceVersion)).toEqual(['10', '11']);
});

test('with an etag, a conflict is ABORTED and not retried', async () => {
  const fake = fakeKube(1);
  const crud = rayServiceCrud({ server: fake.kube });
  const failure = await Promise.resolve(crud.patchRayService(patchLabels('10'), contextFor(fake.kube))).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(failure).toBeInstanceOf(ConnectError);
  expect((failure as ConnectError).code).toBe(Code.Aborted);
  expect(fake.writes).toHaveLength(1);
});
