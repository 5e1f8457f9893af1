/**
 * Smoke test of the Pulumi toolchain built from Go modules (`npm run pulumi:build`): an inline
 * Automation API program run by the real CLI, offline, against the real kube-apiserver
 * (`npm run controlplane:build`). It creates a ConfigMap through the Kubernetes provider plugin and a
 * tiny dynamic resource through `pulumi-resource-pulumi-nodejs`, then checks that a second `up`
 * changes nothing, that `refresh` works and that `destroy` removes the ConfigMap.
 */
import * as fs from 'node:fs';
import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import { OpMap } from '@pulumi/pulumi/automation';
import { ControlPlane, startControlPlane } from '../support/controlplane';
import { BACKGROUND_DELETION, PulumiTestStack, startPulumiStack } from '../support/pulumi';

const NS = 'pulumi-smoke';
const CONFIG_MAP = 'pulumi-smoke';
const configMapPath = `/api/v1/namespaces/${NS}/configmaps/${CONFIG_MAP}`;

/** Outputs of the dynamic resource: who served `create`. */
interface EchoOutputs {
  /** The input message with `!` appended. */
  echoed: string;
  /** Process id of the provider process that ran `create`. */
  providerPid: number;
}

/**
 * A dynamic provider without captured state: its serialized code runs in the
 * `pulumi-resource-pulumi-nodejs` process, not in this one.
 */
const echoProvider: pulumi.dynamic.ResourceProvider<{ message: string }, EchoOutputs> = {
  async create(inputs) {
    return { id: `echo-${inputs.message}`, outs: { echoed: `${inputs.message}!`, providerPid: process.pid } };
  },
};

/** A dynamic resource that echoes its message. */
class Echo extends pulumi.dynamic.Resource {
  declare readonly echoed: pulumi.Output<string>;
  declare readonly providerPid: pulumi.Output<number>;

  constructor(name: string, message: string) {
    super(echoProvider, name, { message, echoed: undefined, providerPid: undefined }, {}, 'smoke', 'Echo');
  }
}

let cp: ControlPlane;
let pulumiStack: PulumiTestStack;
const cliOutput: string[] = [];

/** Changes other than `same` in an operation summary (`{}` when nothing changed). */
function changes(summary: OpMap | undefined): Record<string, number> {
  return Object.fromEntries(Object.entries(summary ?? {}).filter(([op, n]) => op !== 'same' && (n ?? 0) > 0));
}

beforeAll(async () => {
  cp = await startControlPlane();
  const ns = await cp.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  expect(ns.status).toBe(201);
  const kubeconfig = fs.readFileSync(cp.kubeconfigPath, 'utf8');
  pulumiStack = await startPulumiStack({
    projectName: 'rayshift-pulumi-smoke',
    stackName: 'smoke',
    kubeconfig: cp.kubeconfigPath,
    program: async () => {
      const provider = new k8s.Provider('k8s', { kubeconfig });
      const configMap = new k8s.core.v1.ConfigMap(
        'smoke',
        {
          metadata: { name: CONFIG_MAP, namespace: NS, annotations: { ...BACKGROUND_DELETION } },
          data: { greeting: 'hello', from: 'pulumi' },
        },
        // Fail fast rather than after the provider's 10 min default if deletion never completes.
        { provider, customTimeouts: { delete: '2m' } },
      );
      const echo = new Echo('echo', 'offline');
      return { configMapName: configMap.metadata.name, echoed: echo.echoed, providerPid: echo.providerPid };
    },
  });
}, 300_000);

afterAll(async () => {
  await pulumiStack?.dispose();
  await cp?.stop();
});

/** Collects the CLI's output, shown when an expectation fails. */
const onOutput = (line: string) => cliOutput.push(line);

describe('Pulumi toolchain built from Go modules (CLI, Kubernetes provider, dynamic providers)', () => {
  test('up creates the ConfigMap in the API server and runs the dynamic provider in its own process', async () => {
    const result = await pulumiStack.stack.up({ onOutput });
    expect({ result: result.summary.result, output: cliOutput.join('') }).toMatchObject({ result: 'succeeded' });
    // The stack, the explicit provider, the ConfigMap and the dynamic resource.
    expect(changes(result.summary.resourceChanges)).toEqual({ create: 4 });
    expect(result.outputs.configMapName.value).toBe(CONFIG_MAP);
    expect(result.outputs.echoed.value).toBe('offline!');
    expect(result.outputs.providerPid.value).not.toBe(process.pid);

    const cm = await cp.request('GET', configMapPath);
    expect(cm.status).toBe(200);
    expect(cm.body.data).toEqual({ greeting: 'hello', from: 'pulumi' });
  }, 300_000);

  test('a second up changes nothing', async () => {
    const result = await pulumiStack.stack.up({ onOutput });
    expect(result.summary.result).toBe('succeeded');
    expect(changes(result.summary.resourceChanges)).toEqual({});
    expect(result.summary.resourceChanges?.same).toBe(4);
  }, 300_000);

  test('refresh reads every resource back without changes', async () => {
    const result = await pulumiStack.stack.refresh({ onOutput });
    expect(result.summary.result).toBe('succeeded');
    expect(changes(result.summary.resourceChanges)).toEqual({});
  }, 300_000);

  test('destroy deletes the ConfigMap and the stack is empty afterwards', async () => {
    const result = await pulumiStack.stack.destroy({ onOutput });
    expect(result.summary.result).toBe('succeeded');
    expect(changes(result.summary.resourceChanges)).toEqual({ delete: 4 });

    const cm = await cp.request('GET', configMapPath);
    expect(cm.status).toBe(404);
    const state = await pulumiStack.stack.exportStack();
    expect(state.deployment.resources ?? []).toEqual([]);
  }, 300_000);
});
