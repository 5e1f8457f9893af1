/**
 * TEST-ONLY kubelet stand-in for one Pod: kwok's Nodes run no containers, so this runs a Pod's
 * container of the operator image (test/support/operator-container.ts) as a kubelet would, from
 * the Pod object the cluster's controllers created: its image (which must be the built one), args
 * and env (fieldRefs resolved from the Pod), its user, a read-only root with the Pod's emptyDir at
 * /tmp, and its ServiceAccount's token, CA and namespace where in-cluster clients read them, with
 * KUBERNETES_SERVICE_HOST/PORT the test API server's. One deviation, because containers here share
 * the host's network instead of a Pod's: the env variable naming the container's HTTP port gets a
 * free port of the host.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ControlPlane } from './controlplane';
import { ImageContainer, OperatorImage, runContainer } from './operator-container';

type EnvVar = { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } };
/** The parts of a Pod the stand-in reads. */
export interface PodToRun {
  readonly metadata: { readonly name: string; readonly namespace: string };
  readonly spec: {
    readonly serviceAccountName: string;
    readonly containers: readonly { readonly image: string; readonly args?: readonly string[]; readonly env?: readonly EnvVar[]; readonly securityContext?: { readonly runAsUser?: number; readonly readOnlyRootFilesystem?: boolean } }[];
  };
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** What `runPodContainer` started: the container and the folder of its ServiceAccount files. */
export interface PodContainer {
  readonly container: ImageContainer;
  /** Stops the container and removes the ServiceAccount files. */
  stop(): void;
}

/** Runs the Pod's first container; `portEnv` names the env variable that gets a free port. */
export async function runPodContainer(image: OperatorImage, cp: ControlPlane, pod: PodToRun, portEnv: string): Promise<PodContainer> {
  const c = pod.spec.containers[0];
  if (c.image !== image.ref) throw new Error(`Pod ${pod.metadata.namespace}/${pod.metadata.name} runs image ${c.image}; the stand-in runs only the built ${image.ref}`);
  const saDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rayshift-pod-sa-'));
  fs.writeFileSync(path.join(saDir, 'token'), await cp.serviceAccountToken(pod.metadata.namespace, pod.spec.serviceAccountName));
  fs.copyFileSync(cp.caFile, path.join(saDir, 'ca.crt'));
  fs.writeFileSync(path.join(saDir, 'namespace'), pod.metadata.namespace);
  const uid = c.securityContext?.runAsUser ?? 1000;
  for (const f of ['', 'token', 'ca.crt', 'namespace']) fs.chownSync(path.join(saDir, f), uid, uid);
  const fields: Record<string, string> = { 'metadata.name': pod.metadata.name, 'metadata.namespace': pod.metadata.namespace };
  const env: string[] = [];
  for (const e of c.env ?? []) {
    const fieldPath = e.valueFrom?.fieldRef?.fieldPath;
    if (fieldPath !== undefined && fields[fieldPath] === undefined) throw new Error(`the stand-in resolves no fieldRef ${fieldPath} (env ${e.name})`);
    const value = e.name === portEnv ? String(await freePort()) : fieldPath !== undefined ? fields[fieldPath] : e.value ?? '';
    env.push('-e', `${e.name}=${value}`);
  }
  const server = new URL(cp.url);
  const podmanArgs = [
    '--user', `${uid}:${uid}`,
    ...(c.securityContext?.readOnlyRootFilesystem ? ['--read-only', '--tmpfs', '/tmp:size=64m'] : []),
    '-v', `${saDir}:/var/run/secrets/kubernetes.io/serviceaccount:ro`,
    '-e', `KUBERNETES_SERVICE_HOST=${server.hostname}`,
    '-e', `KUBERNETES_SERVICE_PORT=${server.port}`,
    ...env,
  ];
  const container = runContainer(image, `rayshift-pod-${pod.metadata.name}-${process.pid}`, podmanArgs, c.args ?? []);
  return {
    container,
    stop() {
      container.stop();
      fs.rmSync(saDir, { recursive: true, force: true });
    },
  };
}
