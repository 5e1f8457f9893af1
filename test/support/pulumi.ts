/**
 * The real Pulumi toolchain for integration tests, driven offline through the Automation API.
 *
 * `scripts/build-pulumi.sh` (`npm run pulumi:build`) builds the CLI and the Kubernetes provider plugin
 * from the Go wrapper modules in `test/pulumi-toolchain/` into a cache folder (computed by
 * `scripts/pulumi-bin-dir.sh`), next to `pulumi-resource-pulumi-nodejs`, the launcher of dynamic
 * providers, and the language hosts `pulumi-language-nodejs` and `pulumi-language-python` that the
 * CLI starts for a project folder (the consumer test runs `pulumi up` in one). Programs here are
 * *inline* (`program: async () => {...}`): the Automation API runs them in this Node process and
 * serves them to the CLI itself, so a test's program can reach the test's state.
 *
 * Every stack gets its own temporary folder with a file backend (`state/`) and `PULUMI_HOME`
 * (`home/`), a fixed passphrase, no update checks and no plugin downloads: plugins are found on PATH,
 * where the toolchain's bin folder comes first. Annotate Kubernetes objects with `BACKGROUND_DELETION`
 * (the test control plane has no garbage collector).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LocalWorkspace, PulumiCommand, PulumiFn, Stack } from '@pulumi/pulumi/automation';
import { projectRoot } from '../../lib/crds/resolve';
import { runBinDirScript } from './processes';

/** The programs `scripts/build-pulumi.sh` puts in the bin folder. */
const PROGRAMS = ['pulumi', 'pulumi-resource-kubernetes', 'pulumi-resource-pulumi-nodejs', 'pulumi-language-nodejs', 'pulumi-language-python', 'pulumi-language-python-exec'] as const;

/**
 * Annotations for every Kubernetes object a test program creates. The provider deletes with
 * `propagationPolicy: Foreground` by default and waits until the object is gone; the foreground
 * finalizer is removed by kube-controller-manager's garbage collector, which the test control plane
 * does not run, so without this `destroy` (and replacements) hang until the provider's 10 min timeout.
 */
export const BACKGROUND_DELETION: Readonly<Record<string, string>> = {
  'pulumi.com/deletionPropagationPolicy': 'background',
};

/** Passphrase of the stacks' secrets provider (test state only). */
export const TEST_PASSPHRASE = 'rayshift-integration-tests';

/** A built Pulumi toolchain. */
export interface PulumiToolchain {
  /** Folder holding `pulumi`, `pulumi-resource-kubernetes`, `pulumi-resource-pulumi-nodejs` and the language hosts. */
  readonly binDir: string;
  /** Installation root in the Automation API's sense: `PulumiCommand.get({ root })` runs `<root>/bin/pulumi`. */
  readonly root: string;
  /**
   * Environment for the CLI of a stack whose files live in `workDir`: `PATH` with `binDir` first,
   * `PULUMI_HOME=<workDir>/home`, `PULUMI_BACKEND_URL=file://<workDir>/state`,
   * `PULUMI_CONFIG_PASSPHRASE`, `PULUMI_SKIP_UPDATE_CHECK`, `PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION`
   * and `NODE_PATH` (the project's node_modules, so that the dynamic-provider launcher, which runs in
   * `workDir`, finds `@pulumi/pulumi` and the modules that serialized providers `require`).
   */
  env(workDir: string): Record<string, string>;
}

/**
 * The folder with the Pulumi toolchain: `$RAYSHIFT_PULUMI_BIN`, else the cache folder that
 * `scripts/build-pulumi.sh` builds into (computed by `scripts/pulumi-bin-dir.sh`).
 */
export function pulumiBinDir(): string {
  return runBinDirScript(path.join(projectRoot(), 'scripts', 'pulumi-bin-dir.sh'));
}

/** The built toolchain; throws, naming `npm run pulumi:build`, when any of its programs is missing. */
export function pulumiToolchain(): PulumiToolchain {
  const binDir = pulumiBinDir();
  const missing = PROGRAMS.filter((p) => !isExecutable(path.join(binDir, p)));
  if (missing.length > 0) {
    throw new Error(
      `The Pulumi toolchain is not built: ${missing.join(', ')} missing in ${binDir}. ` +
        'Build it with `npm run pulumi:build` (bash scripts/build-pulumi.sh; 30-50 min on 2 cores when cold) ' +
        'or point RAYSHIFT_PULUMI_BIN at a folder with prebuilt binaries.',
    );
  }
  return {
    binDir,
    root: path.dirname(binDir),
    env: (workDir) => ({
      PATH: [binDir, process.env.PATH ?? ''].join(path.delimiter),
      PULUMI_HOME: path.join(workDir, 'home'),
      PULUMI_BACKEND_URL: `file://${path.join(workDir, 'state')}`,
      PULUMI_CONFIG_PASSPHRASE: TEST_PASSPHRASE,
      PULUMI_SKIP_UPDATE_CHECK: 'true',
      PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: 'true',
      NODE_PATH: [path.join(projectRoot(), 'node_modules'), process.env.NODE_PATH ?? '']
        .filter((p) => p !== '')
        .join(path.delimiter),
    }),
  };
}

/** Options of `startPulumiStack`. */
export interface PulumiStackOptions {
  /** Pulumi project name (part of every URN). */
  readonly projectName: string;
  /** Stack name, e.g. `test`. */
  readonly stackName: string;
  /** The inline program, run in this process on every `up`/`preview`. */
  readonly program: PulumiFn;
  /** Kubeconfig path exported as `KUBECONFIG` to the CLI and its plugins. */
  readonly kubeconfig?: string;
  /** Folder for the project, state and `PULUMI_HOME`; default a new temporary folder. */
  readonly workDir?: string;
  /** Stack configuration (`key` or `namespace:key` to value), set before the first operation. */
  readonly config?: Readonly<Record<string, string>>;
}

/** A stack created by `startPulumiStack`. */
export interface PulumiTestStack {
  /** The Automation API stack: call `up`, `preview`, `refresh`, `destroy`, `exportStack` on it. */
  readonly stack: Stack;
  /** The folder with the project, the file backend's `state/` and `home/` (`PULUMI_HOME`). */
  readonly workDir: string;
  /** Environment variables the CLI runs with (see `PulumiToolchain.env`, plus `KUBECONFIG`). */
  readonly env: Readonly<Record<string, string>>;
  /**
   * Deletes `workDir`, and with it the stack's state (resources still in the cluster are left there).
   * Idempotent. Call it after the CLI has exited: an operation still running keeps writing there.
   */
  dispose(): Promise<void>;
}

/**
 * Creates (or selects) a stack of an inline program on a file backend in `workDir`, run by the
 * built CLI with no network access needed. Throws like `pulumiToolchain()` when the toolchain is missing.
 */
export async function startPulumiStack(opts: PulumiStackOptions): Promise<PulumiTestStack> {
  const toolchain = pulumiToolchain();
  const workDir = opts.workDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'rayshift-pulumi-'));
  const env: Record<string, string> = {
    ...toolchain.env(workDir),
    ...(opts.kubeconfig ? { KUBECONFIG: opts.kubeconfig } : {}),
  };
  fs.mkdirSync(path.join(workDir, 'state'), { recursive: true });
  fs.mkdirSync(env.PULUMI_HOME, { recursive: true });
  const pulumiCommand = await PulumiCommand.get({ root: toolchain.root });
  const stack = await LocalWorkspace.createOrSelectStack(
    { projectName: opts.projectName, stackName: opts.stackName, program: opts.program },
    {
      workDir,
      pulumiHome: env.PULUMI_HOME,
      pulumiCommand,
      envVars: env,
      projectSettings: { name: opts.projectName, runtime: 'nodejs', backend: { url: env.PULUMI_BACKEND_URL } },
    },
  );
  for (const [key, value] of Object.entries(opts.config ?? {})) {
    await stack.setConfig(key, { value });
  }
  return {
    stack,
    workDir,
    env,
    async dispose() {
      fs.rmSync(workDir, { recursive: true, force: true });
    },
  };
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}
