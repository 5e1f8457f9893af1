/**
 * The head Pods' serve label (lib/engine/head-serve-label.ts, lib/runtime/rayservice/head-serve-label.ts):
 * the rule as a table, and the writer against the TEST-ONLY fake Kubernetes port.
 */
import { headServeLabel } from '../../lib/engine/head-serve-label';
import { ObservedCluster } from '../../lib/engine/observation';
import { apiReader } from '../../lib/runtime/kube/object-reader';
import { KubeObject } from '../../lib/runtime/kube/types';
import { labelHeadPods } from '../../lib/runtime/rayservice/head-serve-label';
import { POD } from '../../lib/spec/object-names';
import { FakeKube } from './support/fake-kube';

const NS = 'llm';

function cluster(name: string, headReady: boolean, headProxyHealthy?: boolean): ObservedCluster {
  return { name, specHash: 'h', headReady, appsRunning: headReady, readyReplicas: 0, targetReplicas: 0, ...(headProxyHealthy !== undefined ? { headProxyHealthy } : {}) };
}

function pod(name: string, clusterName: string, nodeType: 'head' | 'worker', serve: string, extra: Partial<KubeObject['metadata']> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: NS, labels: { 'ray.io/cluster': clusterName, 'ray.io/node-type': nodeType, 'ray.io/serve': serve }, ...extra } };
}

describe('headServeLabel (KubeRay\'s updateHeadPodServeLabel, from what Serve reports of the head proxy)', () => {
  test.each([
    { headReady: true, healthy: true, exclude: false, label: 'true' },
    { headReady: true, healthy: false, exclude: false, label: 'false' },
    { headReady: true, healthy: undefined, exclude: false, label: 'false' }, // dashboard not answering
    { headReady: false, healthy: true, exclude: false, label: 'false' }, // a stale proxy reading of a head that is not ready
    { headReady: true, healthy: true, exclude: true, label: 'false' },
    { headReady: false, healthy: undefined, exclude: true, label: 'false' },
  ])('head ready $headReady, proxy healthy $healthy, excludeHeadPodFromServeSvc $exclude → $label', ({ headReady, healthy, exclude, label }) => {
    expect(headServeLabel(cluster('c', headReady, healthy), exclude)).toBe(label);
  });
});

/** The executor's steps for `clusters` as the pass plan makes them: each cluster's head Pods get the rule's value. */
async function labelAll(kube: FakeKube, clusters: ObservedCluster[], exclude: boolean): Promise<number> {
  let writes = 0;
  for (const c of clusters) writes += await labelHeadPods(kube, apiReader(kube), NS, c.name, headServeLabel(c, exclude));
  return writes;
}

describe('labelHeadPods', () => {
  test('writes only the head Pods whose label differs, one merge patch of the label each; workers and other clusters untouched', async () => {
    const kube = new FakeKube();
    kube.seed(pod('a-head', 'a', 'head', 'false'));
    kube.seed(pod('a-worker', 'a', 'worker', 'true'));
    kube.seed(pod('b-head', 'b', 'head', 'true'));
    kube.seed(pod('c-head', 'c', 'head', 'true'));
    const writes = await labelAll(kube, [cluster('a', true, true), cluster('b', true, true), cluster('c', true, false)], false);
    expect(writes).toBe(2);
    expect(kube.writes.map((w) => [w.verb, w.name, w.body])).toEqual([
      ['patchMerge', 'a-head', { metadata: { labels: { 'ray.io/serve': 'true' } } }],
      ['patchMerge', 'c-head', { metadata: { labels: { 'ray.io/serve': 'false' } } }],
    ]);
    expect(kube.listNow(POD, NS).map((p) => [p.metadata.name, p.metadata.labels!['ray.io/serve']])).toEqual([
      ['a-head', 'true'],
      ['a-worker', 'true'],
      ['b-head', 'true'],
      ['c-head', 'false'],
    ]);
    // A second pass has nothing to write.
    expect(await labelAll(kube, [cluster('a', true, true), cluster('b', true, true), cluster('c', true, false)], false)).toBe(0);
  });

  test('excludeHeadPodFromServeSvc keeps a healthy head out; a terminating head Pod is left alone', async () => {
    const kube = new FakeKube();
    kube.seed(pod('a-head', 'a', 'head', 'true'));
    kube.seed(pod('b-head', 'b', 'head', 'false', { deletionTimestamp: '2026-11-28T00:00:00Z' }));
    expect(await labelAll(kube, [cluster('a', true, true), cluster('b', true, true)], true)).toBe(1);
    expect(kube.writes.map((w) => w.name)).toEqual(['a-head']);
  });
});
