/**
 * How serialized dynamic providers reach rayshift's runtime. Pulumi serializes a provider's code
 * into the stack state and runs it in `pulumi-resource-pulumi-nodejs`; capturing live clients or
 * the ESM-only `@kubernetes/client-node` there fails. So providers capture only the absolute path
 * of a runtime module and `require` it inside each method.
 */
import type { ResourceProvider } from '@pulumi/pulumi/dynamic';

/** Absolute path of the runtime module `./<basename>` of this folder (`.js` when compiled, `.ts` when run from sources). */
export function runtimeModulePath(basename: string): string {
  return require.resolve(`./${basename}`);
}

/**
 * Loads a runtime module by absolute path inside a provider method. A `.ts` path means the
 * program ran from TypeScript sources (tests through ts-jest); the provider process then compiles
 * them with tsx, a development dependency, registered once per process.
 */
export function loadRuntimeModule<T>(file: string): T {
  const state = globalThis as { rayshiftTsxRegistered?: boolean };
  if (file.endsWith('.ts') && !state.rayshiftTsxRegistered) {
    (require('tsx/cjs/api') as { register(): unknown }).register();
    state.rayshiftTsxRegistered = true;
  }
  return require(file) as T;
}

/** The connection settings a provider reads from the stack configuration (`rayshift:kubeconfig`, `rayshift:context`). */
export interface ProviderSettings {
  /** Kubeconfig text. */
  readonly kubeconfig?: string;
  /** Kubeconfig context. */
  readonly context?: string;
}

/** A rayshift dynamic provider: its `configure` stores the stack's settings for its methods. */
export interface ConfiguredProvider<I, O> extends ResourceProvider<I, O> {
  /** Settings from the stack configuration, filled by `configure`. */
  settings: ProviderSettings;
}

/** The settings in a provider's configuration. */
export function settingsFromStack(config: { get(key: string): string | undefined }): ProviderSettings {
  return { kubeconfig: config.get('rayshift:kubeconfig'), context: config.get('rayshift:context') };
}
