/** KubeRay's dashboard token lookup: only for clusters in token mode, from the Secret KubeRay names, cached. */
import { ObjectReader } from '../../lib/runtime/kube/object-reader';
import { KubeObject, ResourceType } from '../../lib/runtime/kube/types';
import { kubeRayTokenSource } from '../../lib/runtime/serve/kuberay-token';

function readerOf(objects: KubeObject[]): ObjectReader & { reads: string[] } {
  const reads: string[] = [];
  return {
    reads,
    tryGet: async (t: ResourceType, name: string, namespace: string) => {
      reads.push(`${t.kind}/${namespace}/${name}`);
      return objects.find((o) => o.kind === t.kind && o.metadata.name === name && o.metadata.namespace === namespace);
    },
    list: async () => [],
    wrote: () => undefined,
    deleted: () => undefined,
  };
}

const cluster = (name: string, authOptions?: Record<string, unknown>): KubeObject => ({ apiVersion: 'ray.io/v1', kind: 'RayCluster', metadata: { name, namespace: 'ns' }, spec: authOptions ? { authOptions } : {} });
const secret = (name: string, token: string): KubeObject => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'ns' }, data: { auth_token: Buffer.from(`${token}\n`).toString('base64') } });

test('a cluster in token mode gets the token of the Secret named after it, or of authOptions.secretName', async () => {
  const source = kubeRayTokenSource(readerOf([cluster('a', { mode: 'token' }), secret('a', 's3cret-a'), cluster('b', { mode: 'token', secretName: 'shared' }), secret('shared', 's3cret-b')]));
  expect(await source({ namespace: 'ns', name: 'a' })).toBe('s3cret-a');
  expect(await source({ namespace: 'ns', name: 'b' })).toBe('s3cret-b');
});

test('a cluster without token auth (or unknown) gets no token and no Secret is read', async () => {
  const reader = readerOf([cluster('plain'), secret('plain', 'unused')]);
  const source = kubeRayTokenSource(reader);
  expect(await source({ namespace: 'ns', name: 'plain' })).toBeUndefined();
  expect(await source({ namespace: 'ns', name: 'missing' })).toBeUndefined();
  expect(reader.reads.filter((r) => r.startsWith('Secret/'))).toEqual([]);
});

test('a token-mode cluster whose Secret lacks the key is an error naming the Secret, not a silent anonymous call', async () => {
  const source = kubeRayTokenSource(readerOf([cluster('a', { mode: 'token' })]));
  await expect(source({ namespace: 'ns', name: 'a' })).rejects.toThrow('Secret ns/a has no auth_token');
});

test('tokens are reused for the cache period, then read again', async () => {
  let t = 0;
  const reader = readerOf([cluster('a', { mode: 'token' }), secret('a', 'one')]);
  const source = kubeRayTokenSource(reader, { cacheMs: 1000, now: () => t });
  await source({ namespace: 'ns', name: 'a' });
  t = 999;
  await source({ namespace: 'ns', name: 'a' });
  expect(reader.reads.filter((r) => r === 'Secret/ns/a')).toHaveLength(1);
  t = 1000;
  await source({ namespace: 'ns', name: 'a' });
  expect(reader.reads.filter((r) => r === 'Secret/ns/a')).toHaveLength(2);
});
