/**
 * RbgRolloutController start-up over a scripted Transport: which RoleBasedGroup version it watches,
 * with which label selector, and that it stays idle (and ready) where RBG is not installed. The
 * rollouts themselves are covered with RBG v0.7.0's real controller on the test cluster
 * (test/integration/cluster-rbg-operator.test.ts).
 */
import { KubeClient } from '../../../lib/runtime/kube/client';
import { RbgRolloutController } from '../../../operator/rbg-controller';
import { ScriptedTransport } from '../../support/scripted-transport';

const SILENT = { info: () => undefined, warn: () => undefined, debug: () => undefined, error: () => undefined };

test('watches v1alpha2 RoleBasedGroups labelled for the operator when the server serves v1alpha2', async () => {
  const t = new ScriptedTransport({ 'workloads.x-k8s.io/v1alpha2': ['rolebasedgroups'], 'workloads.x-k8s.io/v1alpha1': ['rolebasedgroups'] });
  const c = new RbgRolloutController({ client: new KubeClient(t), log: SILENT });
  await c.start();
  expect(c.ready()).toBe(true);
  const list = t.requests.find((p) => p.includes('/rolebasedgroups?'));
  expect(list).toMatch(/^\/apis\/workloads\.x-k8s\.io\/v1alpha2\/rolebasedgroups\?/);
  expect(decodeURIComponent(list!)).toContain('labelSelector=rayshift.dev/coordination-executor=operator');
  await c.stop();
});

test('falls back to v1alpha1 on RBG v0.6.0', async () => {
  const t = new ScriptedTransport({ 'workloads.x-k8s.io/v1alpha1': ['rolebasedgroups'] });
  const c = new RbgRolloutController({ client: new KubeClient(t), log: SILENT });
  await c.start();
  expect(t.requests.find((p) => p.includes('/rolebasedgroups?'))).toMatch(/^\/apis\/workloads\.x-k8s\.io\/v1alpha1\/rolebasedgroups\?/);
  await c.stop();
});

test('without RBG installed it watches nothing and is ready, so it can run in every operator', async () => {
  const t = new ScriptedTransport({});
  const c = new RbgRolloutController({ client: new KubeClient(t), log: SILENT });
  expect(c.ready()).toBe(false);
  await c.start();
  expect(c.ready()).toBe(true);
  expect(t.requests.filter((p) => p.includes('/rolebasedgroups'))).toEqual([]);
  expect(t.streams).toEqual([]);
  await c.stop();
});

test('watches only the router routes the construct labels (rayshift.dev/router-for), when the server serves HTTPRoutes', async () => {
  const t = new ScriptedTransport({ 'workloads.x-k8s.io/v1alpha2': ['rolebasedgroups'], 'gateway.networking.k8s.io/v1': ['httproutes'] });
  const c = new RbgRolloutController({ client: new KubeClient(t), log: SILENT });
  await c.start();
  expect(c.ready()).toBe(true);
  const routes = t.requests.filter((p) => p.includes('/httproutes'));
  expect(routes.map((p) => decodeURIComponent(p))).toEqual(['/apis/gateway.networking.k8s.io/v1/httproutes?labelSelector=rayshift.dev/router-for&limit=500']);
  await c.stop();
});

test('without the Gateway API it watches no route', async () => {
  const t = new ScriptedTransport({ 'workloads.x-k8s.io/v1alpha2': ['rolebasedgroups'] });
  const c = new RbgRolloutController({ client: new KubeClient(t), log: SILENT });
  await c.start();
  expect(t.requests.filter((p) => p.includes('/httproutes'))).toEqual([]);
  await c.stop();
});
