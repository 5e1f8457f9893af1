/**
 * The components' string unions, given values outside them as a JavaScript program or one of the
 * plugin's languages can (`as never` stands for such a caller): the component fails with every
 * problem, each naming the prop, the value and the component's allowed values.
 */
import { INCREMENTAL, SERVE, clusterSpec, installMocks, registered, settle } from './mocks';

installMocks();

import { RayService, RoleBasedGroup } from '../../lib/pulumi';

const args = { rayClusterConfig: clusterSpec(), serveConfig: SERVE, upgradeStrategy: INCREMENTAL };

test('an unknown executor lists the component\'s executors, pulumi included, once', () => {
  let message = '';
  try {
    new RayService('llm', { ...args, executor: 'Pulumi' as never });
  } catch (err) {
    message = (err as Error).message;
  }
  expect(message).toContain('RayService/llm: executor: "Pulumi" is not an executor; allowed: kuberay, operator, pulumi');
  expect(message.match(/executor: /g)).toHaveLength(1);
});

test('an unknown deadline action fails with the construct\'s problems, all listed', () => {
  expect(() => new RayService('llm', { ...args, executor: 'pulumi', onDeadline: 'Rollback' as never, rayClusterDeletionDelaySeconds: -1 })).toThrow(
    /\(2 problems\):\n.*RayService\/llm: onDeadline: "Rollback" is not a deadline action; allowed: rollback, pause\n.*RayService\/llm: spec\.rayClusterDeletionDelaySeconds: must be an integer from 0/,
  );
});

test('the component\'s own values pass: executor pulumi with each deadline action', async () => {
  const services = (['rollback', 'pause'] as const).map((onDeadline) => new RayService(`llm-${onDeadline}`, { ...args, executor: 'pulumi', onDeadline }));
  await settle(...services.flatMap((s) => [s, s.migration!]));
  expect(registered.filter((r) => r.type === 'pulumi-nodejs:dynamic/rayshift:RayServiceMigration').map((r) => r.inputs.onDeadline)).toEqual(['rollback', 'pause']);
});

test('a RoleBasedGroup component checks its unions through the construct', () => {
  const roles = ['prefill', 'decode'].map((name) => ({ name, replicas: 2, template: { spec: { containers: [{ name, image: 'vllm:1' }] } } }));
  expect(() => new RoleBasedGroup('pd', { roles, executor: 'Pulumi' as never, version: 'v2' as never })).toThrow(
    /version: "v2" is not a RoleBasedGroup version; allowed: v1alpha1, v1alpha2[\s\S]*executor: "Pulumi" is not an executor; allowed: operator, pulumi, rbg/,
  );
});
