/**
 * The provider of the rayshift Pulumi plugin package: it serves the generated schema, from which
 * `pulumi package add` generates each language's SDK, and constructs the TypeScript components
 * when a program in any language creates one (the engine calls `construct` with its inputs). The
 * plugin folder's entry (`pulumi-plugin/index.js`) runs `main`. See docs/pulumi-plugin.md.
 */
import type * as pulumi from '@pulumi/pulumi';
import * as provider from '@pulumi/pulumi/provider';
import { PLUGIN_COMPONENTS } from './components';
import schema from './generated/schema.json';

/** Serves the plugin package's schema and constructs its components. */
export class RayshiftPluginProvider implements provider.Provider {
  /** The package version, the schema's. */
  readonly version = schema.version;

  /** The generated schema (lib/pulumi/plugin/generated/schema.json). */
  async getSchema(): Promise<string> {
    return JSON.stringify(schema);
  }

  /** Creates the component of `type` as a TypeScript program would, and returns its outputs. */
  async construct(name: string, type: string, inputs: pulumi.Inputs, options: pulumi.ComponentResourceOptions): Promise<provider.ConstructResult> {
    const entry = PLUGIN_COMPONENTS.find((c) => c.token === type);
    if (entry === undefined) throw new Error(`unknown resource type ${type}: the rayshift package has ${PLUGIN_COMPONENTS.map((c) => c.token).join(', ')}`);
    const instance = new entry.component(name, inputs as never, options) as unknown as Record<string, unknown> & pulumi.ComponentResource;
    return { urn: instance.urn, state: Object.fromEntries(entry.outputs.map((o) => [o, instance[o]])) };
  }
}

/** Runs the provider's gRPC server (the plugin's entry); `args` are the engine's command-line arguments. */
export function main(args: string[] = process.argv.slice(2)): Promise<void> {
  return provider.main(new RayshiftPluginProvider(), args);
}
