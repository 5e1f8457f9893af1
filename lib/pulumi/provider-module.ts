/**
 * How serialized dynamic providers reach rayshift's runtime. Pulumi serializes a provider's code
 * into the stack state and runs it in `pulumi-resource-pulumi-nodejs`; capturing live clients or
 * the ESM-only `@kubernetes/client-node` there fails. So providers capture only the absolute path
 * of a runtime module and `require` it inside each method: `operationsProvider` builds such a
 * provider over an operations module.
 */
import type { CreateResult, DiffResult, ReadResult, ResourceProvider, UpdateResult } from '@pulumi/pulumi/dynamic';

/** Absolute path of the runtime module `./<basename>` of this folder (`.js` when compiled, `.ts` when run from sources). */
export function runtimeModulePath(basename: string): string {
  return require.resolve(`./${basename}`);
}

/**
 * Loads a runtime module by absolute path inside a provider method. A `.ts` path means the
 * program ran from TypeScript sources (tests through ts-jest); the provider process then compiles
 * them with tsx, a development dependency, registered once per process.
 */
function loadRuntimeModule<T>(file: string): T {
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
function settingsFromStack(config: { get(key: string): string | undefined }): ProviderSettings {
  return { kubeconfig: config.get('rayshift:kubeconfig'), context: config.get('rayshift:context') };
}

/**
 * What an operations module exports: one function per provider method it carries out, named after
 * the method; every one but `diff` gets the stack's settings first.
 */
export interface ProviderOperations<I, O> {
  /** `diff`: whether new inputs change (or replace) the resource. */
  diff(olds: O, news: I): DiffResult;
  /** `create`: the id and outputs of a new resource. */
  create(settings: ProviderSettings, inputs: I): Promise<CreateResult<O>>;
  /** `update`: the outputs after new inputs. */
  update(settings: ProviderSettings, news: I): Promise<UpdateResult<O>>;
  /** `read` (`pulumi refresh`); without it Pulumi keeps the stored outputs. */
  read?(settings: ProviderSettings, id: string, props: O): Promise<ReadResult<O>>;
  /** `delete` (`pulumi destroy`); without it Pulumi only drops the resource from the state. */
  delete?(settings: ProviderSettings, props: O): Promise<void>;
}

/** The provider methods an operations module may leave out. */
export type OptionalOperation = 'read' | 'delete';

const OPTIONAL_OPERATIONS: readonly OptionalOperation[] = ['read', 'delete'];

/**
 * The dynamic provider of the operations module `Operations` at `modulePath` (absolute, see
 * `runtimeModulePath`): `configure` keeps the stack's settings, and every other method loads the
 * module and calls its function of the same name. It has `read` and `delete` only when `optional`
 * names them, so for a module without them Pulumi's own behaviour applies.
 */
export function operationsProvider<I, O, Operations extends ProviderOperations<I, O>>(modulePath: string, optional: readonly (OptionalOperation & keyof Operations)[] = []): ConfiguredProvider<I, O> {
  // Only the methods `optional` names call `read` and `delete`, and `Operations` declares those.
  const operations = (): Required<ProviderOperations<I, O>> => loadRuntimeModule(modulePath);
  const provider: ConfiguredProvider<I, O> = {
    settings: {},
    async configure(req) {
      this.settings = settingsFromStack(req.config);
    },
    async diff(_id, olds, news) {
      return operations().diff(olds, news);
    },
    async create(inputs) {
      return operations().create(this.settings, inputs);
    },
    async update(_id, _olds, news) {
      return operations().update(this.settings, news);
    },
    async read(id, props) {
      return operations().read(this.settings, id, props as O);
    },
    async delete(_id, props) {
      await operations().delete(this.settings, props);
    },
  };
  const supported: readonly OptionalOperation[] = optional;
  for (const method of OPTIONAL_OPERATIONS) if (!supported.includes(method)) delete provider[method];
  return provider;
}
