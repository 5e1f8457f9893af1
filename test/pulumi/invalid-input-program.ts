/**
 * A Pulumi program, under mocks, whose RayService (or RoleBasedGroup) gets an invalid spec as an
 * output: run in a process of its own, since the failure surfaces as Pulumi programs fail, by an
 * unhandled rejection of the registrations that need the rendering (Pulumi's runner reports it as
 * the deployment's error). Usage: `node --require tsx/cjs invalid-input-program.ts rayservice|rolebasedgroup`;
 * on exit, the types registered go to stdout as JSON, the error to stderr by Node.
 */
import * as pulumi from '@pulumi/pulumi';
import { RayService, RoleBasedGroup } from '../../lib/pulumi';
import { INCREMENTAL, SERVE, clusterSpec, installMocks, registered } from './mocks';

installMocks();

process.on('exit', () => process.stdout.write(`${JSON.stringify(registered.map((r) => r.type))}\n`));

if (process.argv[2] === 'rayservice') {
  const strategy = pulumi.output(Promise.resolve({ ...INCREMENTAL, clusterUpgradeOptions: { ...INCREMENTAL.clusterUpgradeOptions, stepSizePercent: 0 } }));
  new RayService('llm', { rayClusterConfig: clusterSpec(), serveConfig: SERVE, upgradeStrategy: strategy });
} else {
  const roles = ['prefill', 'decode'].map((name) => ({ name, replicas: name === 'prefill' ? -1 : 4, template: { spec: { containers: [{ name, image: 'vllm:1' }] } } }));
  new RoleBasedGroup('pd', { roles: pulumi.output(Promise.resolve(roles)) });
}
