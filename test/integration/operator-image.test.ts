/**
 * The operator image of scripts/build-operator-image.sh, run as a container (podman, `--init`, host
 * network) against the real API server: it starts as uid 1000 with no shell, answers /readyz, and the
 * operator in it reconciles a rayshift RayService (creates its first RayCluster, writes its status);
 * the API server from the same image serves that RayService over REST. The build is cached
 * (~/.cache/rayshift/operator-image); `.ci/run` builds it in the background before this suite. The
 * full upgrade by the container on the test cluster is cluster-operator-image.test.ts.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { KubeClient } from '../../lib/runtime/kube/client';
import { ControlPlane, startControlPlane, upstreamCrdFiles } from '../support/controlplane';
import { ImageContainer, OperatorImage, buildOperatorImage, kubeconfigForContainers, podman, runImage, waitForContainer } from '../support/operator-container';
import { RAYCLUSTER, RAYSHIFT_RAYSERVICE, createNamespace, installRayshiftCrd, rayService } from '../support/operator-env';

const VERSION = (JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string }).version;

let image: OperatorImage;
let cp: ControlPlane;
let admin: KubeClient;
let kubeDir: string;
const containers: ImageContainer[] = [];

/** A port nothing listens on now (the containers share the host's network). */
async function freePort(): Promise<number> {
  const server = net.createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function httpStatus(url: string): Promise<number> {
  return fetch(url).then((r) => r.status, () => 0);
}

beforeAll(async () => {
  image = buildOperatorImage();
  cp = await startControlPlane({ crds: await upstreamCrdFiles() });
  admin = KubeClient.fromKubeconfig(cp.kubeconfigPath);
  await installRayshiftCrd(cp);
  kubeDir = kubeconfigForContainers(cp);
}, 600_000);

afterAll(async () => {
  for (const c of containers) c.stop();
  admin?.close();
  await cp?.stop();
  if (kubeDir) fs.rmSync(kubeDir, { recursive: true, force: true });
});

test('the image runs as uid 1000, is labelled with the package version, and has no shell', () => {
  const config = JSON.parse(podman(image, ['image', 'inspect', '--format', '{{json .Config}}', image.ref])) as { User: string; Labels: Record<string, string>; Entrypoint: string[] };
  expect(config.User).toBe('1000:1000');
  expect(config.Labels['org.opencontainers.image.version']).toBe(VERSION);
  expect(config.Entrypoint).toEqual(['/usr/local/bin/node', '/app/node_modules/rayshift/bin/rayshift.js']);
  expect(podman(image, ['run', '--rm', image.ref, '--version']).trim()).toBe(VERSION);
  expect(() => podman(image, ['run', '--rm', '--entrypoint', '/bin/sh', image.ref, '-c', 'true'])).toThrow();
});

test('the operator in the container gets ready and reconciles a rayshift RayService; the API server from the same image serves it', async () => {
  const port = await freePort();
  const operator = runImage(image, kubeDir, `rayshift-operator-test-${process.pid}`, ['operator', '--kubeconfig', '/kube/config', '--http-port', String(port)]);
  containers.push(operator);
  await waitForContainer(operator, async () => (await httpStatus(`http://127.0.0.1:${port}/readyz`)) === 200, "the operator container's /readyz");

  await createNamespace(admin, 'image');
  await admin.create(rayService('image', 'llm'));
  await waitForContainer(operator, async () => (await admin.list(RAYCLUSTER, { namespace: 'image' })).items.length === 1, 'the RayCluster the operator creates');
  const [cluster] = (await admin.list(RAYCLUSTER, { namespace: 'image' })).items;
  expect(cluster.metadata.ownerReferences?.map((o) => `${o.apiVersion}/${o.kind}/${o.name}`)).toEqual(['rayshift.dev/v1alpha1/RayService/llm']);
  await waitForContainer(operator, async () => ((await admin.tryGet(RAYSHIFT_RAYSERVICE, 'llm', 'image'))?.status as { phase?: string } | undefined)?.phase !== undefined, 'the status the operator writes');
  await waitForContainer(operator, () => operator.log.some((l) => l.includes('"rayservice":"image/llm"') && l.includes('createPendingCluster')), "the operator's log of its step");

  const apiPort = await freePort();
  const api = runImage(image, kubeDir, `rayshift-api-server-test-${process.pid}`, ['api-server', '--kubeconfig', '/kube/config', '--insecure-local', '--listen', `127.0.0.1:${apiPort}`]);
  containers.push(api);
  const url = `http://127.0.0.1:${apiPort}/apis/rayshift/v1/namespaces/image/rayservices`;
  await waitForContainer(api, async () => (await httpStatus(url)) === 200, 'the API server container');
  const listed = (await (await fetch(url)).json()) as { rayServices: { name: string; executor: string }[] };
  expect(listed.rayServices.map((s) => `${s.name} ${s.executor}`)).toEqual(['llm EXECUTOR_OPERATOR']);
});
