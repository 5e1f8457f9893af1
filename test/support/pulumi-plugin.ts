/**
 * Python programs of the rayshift Pulumi plugin package, for the integration tests: a virtualenv
 * with Pulumi's Python SDK from PyPI and the SDK generated from the package's schema
 * (`scripts/build-pulumi-sdk.sh --venv`), and the plugin's provider run from its own entry
 * (`pulumi-plugin/index.js`, which needs `npm run build`), attached to the CLI with
 * `PULUMI_DEBUG_PROVIDERS` as Pulumi's Node.js language host would start it (that host is not
 * served by the Go module proxy). Programs are test/python/pulumi/program.py's variants, run by
 * the toolchain of test/support/pulumi.ts.
 */
import { ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { ResourceProviderClient } from '@pulumi/pulumi/proto/provider_grpc_pb';
import { GetSchemaRequest, GetSchemaResponse } from '@pulumi/pulumi/proto/provider_pb';
import { projectRoot } from '../../lib/crds/resolve';
import { pulumiToolchain } from './pulumi';

/** What a run of a program reports (program.py, or its TypeScript twin). */
export interface ProgramRunResult {
  /** URNs the engine registered, sorted, providers left out. */
  readonly urns?: string[];
  /** The inputs of each Kubernetes resource the components render, by URN. */
  readonly objects?: Record<string, unknown>;
  /** Stack outputs after `up`. */
  readonly outputs?: Record<string, unknown>;
  /** The CLI's error, when the operation failed. */
  readonly error?: string;
}

/** A Python stack folder and how to run program.py in it. */
export interface PluginPython {
  /**
   * Runs program.py's `variant` (`all`, `bad`, `service` or `file`) with `operation` on the stack in
   * `stackDir` (created when missing; keep it to run again on the same state); `env` adds variables.
   */
  run(stackDir: string, operation: 'preview' | 'up', variant: 'all' | 'bad' | 'service' | 'file', env?: Record<string, string>): Promise<ProgramRunResult>;
  /** Stops the provider. */
  stop(): void;
}

/** Builds the virtualenv in `work/venv` and starts the plugin's provider. */
export async function startPluginPython(work: string): Promise<PluginPython> {
  const root = projectRoot();
  const built = path.join(root, 'build', 'lib', 'pulumi', 'plugin', 'provider.js');
  if (!fs.existsSync(built)) throw new Error(`the plugin's provider runs from ${built}, which is missing: run \`npm run build\` first`);
  const out = execFileSync('bash', [path.join(root, 'scripts', 'build-pulumi-sdk.sh'), '--venv', path.join(work, 'venv')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const python = out.trim().split('\n').pop()!;
  const provider = await startPluginProvider(path.join(root, 'pulumi-plugin', 'index.js'));
  const port = provider.port;
  return {
    async run(stackDir, operation, variant, extraEnv = {}) {
      const toolchainEnv = pulumiToolchain().env(stackDir);
      const env = { ...process.env, ...toolchainEnv, ...extraEnv, RAYSHIFT_WORK_DIR: stackDir, PULUMI_DEBUG_PROVIDERS: `rayshift:${port}` };
      fs.mkdirSync(toolchainEnv.PULUMI_HOME, { recursive: true });
      fs.mkdirSync(path.join(stackDir, 'state'), { recursive: true });
      const args = [path.join(root, 'test', 'python', 'pulumi', 'program.py'), 'plugin', 'test', operation, variant];
      // Asynchronously: the tests watch the cluster meanwhile.
      const { status, stdout, stderr } = await new Promise<{ status: number; stdout: string; stderr: string }>((resolve) =>
        execFile(python, args, { cwd: stackDir, env, encoding: 'utf8', timeout: 280_000, maxBuffer: 64 << 20 }, (error, out, err) =>
          resolve({ status: error ? Number((error as { code?: unknown }).code ?? 1) || 1 : 0, stdout: out, stderr: err }),
        ),
      );
      const last = stdout.trim().split('\n').pop() ?? '';
      if (status !== 0 || !last.startsWith('{')) throw new Error(`program.py exited ${status}: ${stderr.slice(-3000)}`);
      const result = JSON.parse(last) as ProgramRunResult;
      return result.urns ? { ...result, urns: withoutProviders(result.urns) } : result;
    },
    stop: () => provider.stop(),
  };
}

/** A running plugin provider. */
export interface PluginProvider {
  /** The port it serves gRPC on (what it printed first). */
  readonly port: string;
  /** Kills it. */
  stop(): void;
}

/** Runs a plugin entry (`pulumi-plugin/index.js`) with `node` and waits for the port it prints. */
export async function startPluginProvider(entry: string, options: { cwd?: string; env?: NodeJS.ProcessEnv; node?: string } = {}): Promise<PluginProvider> {
  const child: ChildProcess = spawn(options.node ?? process.execPath, [entry], { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout!.once('data', (chunk) => resolve(String(chunk).trim().split('\n')[0]));
    child.once('exit', (code) => reject(new Error(`the plugin's provider ${entry} exited (${code}) before serving`)));
  });
  return { port, stop: () => void child.kill() };
}

/** The schema a plugin provider serves, asked over gRPC as the engine does (`ResourceProvider.GetSchema`). */
export async function servedSchema(port: string): Promise<{ name: string; version: string; resources: Record<string, unknown> }> {
  const client = new ResourceProviderClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  try {
    const response = await new Promise<GetSchemaResponse>((resolve, reject) => client.getSchema(new GetSchemaRequest(), (error, r) => (error ? reject(error) : resolve(r))));
    return JSON.parse(response.getSchema());
  } finally {
    client.close();
  }
}

/** URNs less the providers' (a Python program registers the rayshift package's provider, a TypeScript one does not). */
export function withoutProviders(urns: readonly string[]): string[] {
  return urns.filter((u) => !u.includes('::pulumi:providers:')).sort();
}
