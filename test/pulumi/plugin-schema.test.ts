/**
 * The Pulumi plugin package's schema (lib/pulumi/plugin/generated/schema.json): it is what the
 * components' TypeScript types generate (scripts/pulumi-schema/generate.ts), and it maps the
 * model's unions, enums and inputs the way the SDKs of other languages need them. The plugin from
 * a Python program: test/integration/pulumi-plugin.test.ts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { projectRoot } from '../../lib/crds/resolve';
import { PLUGIN_COMPONENTS, PLUGIN_SCHEMA_PATH } from '../../lib/pulumi/plugin/components';
import { RayshiftPluginProvider } from '../../lib/pulumi/plugin/provider';
import { renderPulumiSchema } from '../../scripts/pulumi-schema/generate';

const root = projectRoot();
const committed = fs.readFileSync(path.join(root, PLUGIN_SCHEMA_PATH), 'utf8');
const schema = JSON.parse(committed);
const resource = (name: string) => schema.resources[`rayshift:index:${name}`];
const type = (name: string) => schema.types[`rayshift:index:${name}`];

test('the committed schema is what the components\' types generate (run `npm run generate:pulumi-schema` after changing them)', () => {
  expect(renderPulumiSchema(root)).toBe(committed);
}, 120_000);

test('every component is a component resource of the schema, with its outputs', () => {
  expect(Object.keys(schema.resources).sort()).toEqual(PLUGIN_COMPONENTS.map((c) => c.token).sort());
  for (const c of PLUGIN_COMPONENTS) {
    expect(resource(c.name).isComponent).toBe(true);
    expect(Object.keys(resource(c.name).properties).sort()).toEqual([...c.outputs].sort());
  }
  expect(schema.version).toBe(JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).version);
});

test('unions become oneOf, less what only TypeScript can pass; literal unions become enums', () => {
  const rayService = resource('RayService').inputProperties;
  expect(rayService.serveConfig.oneOf).toEqual([{ type: 'string' }, { $ref: '#/types/rayshift:index:ServeConfig' }]);
  // A RayClusterSpecBuilder (a class) is TypeScript's alone: the raw spec remains, an input (not plain).
  expect(rayService.rayClusterConfig).toEqual(expect.objectContaining({ $ref: '#/types/rayshift:index:RayClusterConfig' }));
  expect(rayService.rayClusterConfig.plain).toBeUndefined();
  expect(resource('RayService').requiredInputs).toEqual(['rayClusterConfig']);
  // A GatewayClass construct or component is TypeScript's alone: its name remains.
  expect(resource('Gateway').inputProperties.gatewayClass).toMatchObject({ type: 'string' });
  // A Gateway component is TypeScript's alone; a reference may be an output (an input item, not plain).
  expect(resource('HttpRoute').inputProperties.parents.items).toEqual({ $ref: '#/types/rayshift:index:ParentReference' });
  expect(type('RollingUpdateCoordination').properties.maxUnavailable.oneOf).toEqual([{ type: 'string' }, { type: 'number' }]);
  expect(rayService.executor.$ref).toBe('#/types/rayshift:index:RayServiceComponentExecutor');
  expect(type('RayServiceComponentExecutor').enum).toEqual([{ value: 'kuberay' }, { value: 'operator' }, { value: 'pulumi' }]);
  expect(type('UpgradeStrategyType').enum.map((e: { value: string }) => e.value)).toEqual(['NewCluster', 'NewClusterWithIncrementalUpgrade', 'None']);
});

test('the model\'s props and the connection are inputs, the kubeconfig a secret; executors and run settings plain; descriptions carry the TSDoc and its default', () => {
  const kubeconfig = resource('RayService').inputProperties.kubeconfig;
  expect(kubeconfig).toMatchObject({ type: 'string', secret: true });
  expect(kubeconfig.plain).toBeUndefined();
  expect(resource('RoleBasedGroup').inputProperties.kubeconfig).toMatchObject({ secret: true });
  const inputs = (name: string) => Object.entries(resource(name).inputProperties as Record<string, { plain?: boolean }>).filter(([, p]) => !p.plain).map(([k]) => k).sort();
  expect(inputs('RayService')).toEqual(['context', 'excludeHeadPodFromServeSvc', 'kubeconfig', 'metadata', 'rayClusterConfig', 'rayClusterDeletionDelaySeconds', 'rayshift', 'serveConfig', 'upgradeStrategy']);
  expect(inputs('RoleBasedGroup')).toEqual(['analysis', 'context', 'coordination', 'kubeconfig', 'metadata', 'rbgVersion', 'roles', 'version', 'warmup']);
  expect(inputs('Gateway')).toEqual(['gatewayClass', 'listeners', 'metadata']);
  expect(inputs('HttpRoute')).toEqual(['hostnames', 'metadata', 'rules']);
  expect(resource('RayService').inputProperties.deadlineSeconds).toMatchObject({ type: 'number', plain: true });
  expect(resource('RoleBasedGroup').inputProperties.executor).toMatchObject({ plain: true });
  expect(type('ClusterUpgradeOptions').properties.stepSizePercent.description).toMatch(/\S/);
  expect(resource('RayService').inputProperties.executor.description).toMatch(/Default: "kuberay"\.$/);
  // A pod template's spec is Kubernetes JSON: any value.
  expect(type('PodTemplateJson').properties.spec.$ref).toBe('pulumi.json#/Any');
});

test('the provider serves the committed schema and names the package\'s types for an unknown one', async () => {
  const provider = new RayshiftPluginProvider();
  expect(JSON.parse(await provider.getSchema())).toEqual(schema);
  expect(provider.version).toBe(schema.version);
  await expect(provider.construct('x', 'rayshift:index:Nope', {}, {})).rejects.toThrow(/unknown resource type rayshift:index:Nope: the rayshift package has rayshift:index:GatewayClass, .*rayshift:index:RoleBasedGroup/);
});
