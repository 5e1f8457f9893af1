/** Pulumi mocks for the component tests: every registered resource is recorded; outputs echo inputs (an unnamed Namespace is autonamed). */
import * as pulumi from '@pulumi/pulumi';

/** A resource the program registered. */
export interface Registered {
  readonly type: string;
  readonly name: string;
  readonly inputs: Record<string, any>;
}

/** Resources registered since the last `reset()`, in order. */
export const registered: Registered[] = [];

/**
 * The suffix the mock gives a Namespace created without `metadata.name`, standing in for the
 * Kubernetes provider's autonaming: a value that exists only as the Namespace's output.
 */
export const AUTONAME_SUFFIX = '-x7k2p';

/** What the mock provider returns for a resource: its inputs, and an autonamed Namespace's name. */
function stateOf(type: string, name: string, inputs: Record<string, any>): Record<string, any> {
  if (type !== 'kubernetes:core/v1:Namespace' || inputs.metadata?.name !== undefined) return inputs;
  return { ...inputs, metadata: { ...inputs.metadata, name: `${name}${AUTONAME_SUFFIX}` } };
}

/** Installs the mocks (call before constructing any resource); `preview` runs the program as `pulumi preview` does. */
export function installMocks(preview = false): void {
  void pulumi.runtime.setMocks(
    {
      newResource(args) {
        registered.push({ type: args.type, name: args.name, inputs: args.inputs });
        return { id: `${args.name}-id`, state: stateOf(args.type, args.name, args.inputs) };
      },
      call: (args) => args.inputs,
    },
    'rayshift-test',
    'unit',
    preview,
  );
}

/** Forgets what was registered. */
export function reset(): void {
  registered.length = 0;
}

/** Waits until every resource given (or given as an output) is registered (their URNs resolve), then returns what was registered. */
export async function settle(...resources: pulumi.Input<pulumi.Resource | undefined>[]): Promise<Registered[]> {
  await Promise.all(resources.map((r) => new Promise((resolve) => pulumi.output(r).apply((resource) => (resource ? resource.urn.apply(resolve) : resolve(undefined))))));
  return registered;
}

/** The value of an output. */
export function valueOf<T>(output: pulumi.Output<T>): Promise<T> {
  return new Promise((resolve) => output.apply(resolve));
}

/** A valid incremental cluster spec whose worker CPU request tells versions apart. */
export function clusterSpec(cpu = '1'): any {
  const container = (name: string) => ({ name, image: 'rayproject/ray:2.52.0', resources: { requests: { cpu } } });
  return {
    enableInTreeAutoscaling: true,
    headGroupSpec: { rayStartParams: { 'num-cpus': '0' }, template: { spec: { containers: [{ ...container('ray-head'), ports: [{ name: 'serve', containerPort: 8000 }] }] } } },
    workerGroupSpecs: [{ groupName: 'cpu', replicas: 1, minReplicas: 1, maxReplicas: 4, template: { spec: { containers: [container('ray-worker')] } } }],
  };
}

/** Serve config of one app. */
export const SERVE = 'applications:\n- name: app\n  import_path: app:build\n  route_prefix: /\n';

/** Incremental upgrade options (surge 50, step 25, interval 1 s, class "simulated"). */
export const INCREMENTAL = {
  type: 'NewClusterWithIncrementalUpgrade' as const,
  clusterUpgradeOptions: { maxSurgePercent: 50, stepSizePercent: 25, intervalSeconds: 1, gatewayClassName: 'simulated' },
};
