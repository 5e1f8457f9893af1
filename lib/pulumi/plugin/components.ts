/**
 * The components the rayshift Pulumi plugin package serves to every Pulumi language: one home for
 * their classes, type tokens, outputs and secret inputs, read by the schema generator
 * (scripts/pulumi-schema/generate.ts) and by the provider (`construct`).
 */
import type * as pulumi from '@pulumi/pulumi';
import { Gateway, GatewayClass } from '../gateway';
import { RayService } from '../rayservice';
import { RoleBasedGroup } from '../rolebasedgroup';
import { GrpcRoute, HttpRoute } from '../route';

/** A component class as `construct` calls it, with the inputs the engine delivers. */
export type PluginComponentClass = new (name: string, args: never, opts?: pulumi.ComponentResourceOptions) => pulumi.ComponentResource;

/** One component of the plugin package. */
export interface PluginComponent {
  /** The class's name as `rayshift/pulumi` exports it (its constructor's `args` are the inputs). */
  readonly name: string;
  /** The class. */
  readonly component: PluginComponentClass;
  /** Its Pulumi type token, as the class registers itself. */
  readonly token: string;
  /** The instance fields the component returns to the caller's program. */
  readonly outputs: readonly string[];
  /** Outputs that may be undefined. */
  readonly optionalOutputs: readonly string[];
  /** Inputs the schema marks secret (the SDKs then encrypt them in state). */
  readonly secretInputs: readonly string[];
}

/** The package: its name (the token prefix) and how its SDKs are named. */
export const PLUGIN_PACKAGE = {
  name: 'rayshift',
  displayName: 'rayshift',
  description: 'Stepwise RayService upgrades and coordinated RoleBasedGroup rollouts on Kubernetes, with Gateway API routes.',
  pythonPackage: 'rayshift_pulumi',
} as const;

/** Where the generated schema lives, relative to the repository root. */
export const PLUGIN_SCHEMA_PATH = 'lib/pulumi/plugin/generated/schema.json';

const entry = (name: string, component: PluginComponentClass, outputs: string[], more: Partial<Pick<PluginComponent, 'optionalOutputs' | 'secretInputs'>> = {}): PluginComponent => ({
  name,
  component,
  token: `${PLUGIN_PACKAGE.name}:index:${name}`,
  outputs,
  optionalOutputs: more.optionalOutputs ?? [],
  secretInputs: more.secretInputs ?? [],
});

/** Every component of the plugin package. */
export const PLUGIN_COMPONENTS: readonly PluginComponent[] = [
  entry('GatewayClass', GatewayClass, ['className']),
  entry('Gateway', Gateway, ['gatewayName', 'namespace'], { optionalOutputs: ['namespace'] }),
  entry('HttpRoute', HttpRoute, ['routeName']),
  entry('GrpcRoute', GrpcRoute, ['routeName']),
  entry('RayService', RayService, ['serviceName', 'namespace', 'executor', 'activeClusterName'], { optionalOutputs: ['activeClusterName'], secretInputs: ['kubeconfig'] }),
  entry('RoleBasedGroup', RoleBasedGroup, ['groupName', 'executor', 'routerRevisions'], { secretInputs: ['kubeconfig'] }),
];
