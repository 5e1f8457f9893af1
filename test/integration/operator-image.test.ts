/**
 * The operator image of scripts/build-operator-image.sh, run as a container (podman, `--init`, host
 * network) against the real API server: it starts as uid 1000 with no shell, answers /readyz, and the
 * operator in it reconciles a rayshift RayService (creates its first RayCluster, writes its status);
 * the API server from the same image serves that RayService over REST. The build is cached
 * (~/.cache/rayshift/operator-image); `.ci/run` builds it in the background before this suite.
 */
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { KubeClient } from '../../lib/runtime/kube/client';
import { ControlPlane, startControlPlane, upstreamCrdFiles } from '../support/controlplane';
import { createNamespace, installRayshiftCrd, rayService, waitFor } from '../support/operator-env';

const ROOT = path.join(__dirname, '..', '..');
const VERSION = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const RAYCLUSTER = { apiVersion: 'ray.io/v1', kind: 'RayCluster', plural: 'rayclusters', namespaced: true } as const;
const RAYSHIFT_RAYSERVICE = { apiVersion: 'rayshift.dev/v1alpha1', kind: 'RayService', plural: 'rayservices', namespaced: true } as const;

let image: string;
let env: NodeJS.ProcessEnv;
let cp: ControlPlane;
let admin: KubeClient;
let kubeDir: string;
const containers: { name: string; proc: ChildProcess; log: string[] }[] = [];

/** A port nothing listens on now (the containers share the host's network). */
async function freePort(): Promise<number> {
  const server = net.createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function podman(args: string[]): string {
  return execFileSync('podman', args, { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** `podman run --rm --init --network host` of the image with the kubeconfig mounted at /kube; output kept in `log`. */
function runContainer(name: string, args: string[]): { log: string[] } {
  const proc = spawn('podman', ['run', '--rm', '--init', '--network', 'host', '--name', name, '-v', `${kubeDir}:/kube:ro`, image, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const entry = { name, proc, log: [] as string[] };
  // Whole lines only: a chunk may end inside one.
  const keeper = () => {
    let rest = '';
    return (b: Buffer) => {
      const lines = (rest + b.toString('utf8')).split('\n');
      rest = lines.pop()!;
      entry.log.push(...lines.filter((l) => l !== ''));
    };
  };
  proc.stdout!.on('data', keeper());
  proc.stderr!.on('data', keeper());
  containers.push(entry);
  return entry;
}

/** `waitFor`, its error carrying the container's output so far. */
async function waitForContainer(c: { log: string[] }, check: () => Promise<boolean>, what: string): Promise<void> {
  await waitFor(check, what, 120_000, 100).catch((e: Error) => {
    throw new Error(`${e.message}\ncontainer output:\n${c.log.join('\n')}`);
  });
}

async function httpStatus(url: string): Promise<number> {
  return fetch(url).then((r) => r.status, () => 0);
}

beforeAll(async () => {
  const out = execFileSync('bash', [path.join(ROOT, 'scripts', 'build-operator-image.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim().split('\n');
  image = out[out.length - 1];
  const conf = out.find((l) => l.startsWith('CONTAINERS_CONF='))!.slice('CONTAINERS_CONF='.length);
  env = { ...process.env, CONTAINERS_CONF: conf };
  cp = await startControlPlane({ crds: await upstreamCrdFiles() });
  admin = KubeClient.fromKubeconfig(cp.kubeconfigPath);
  await installRayshiftCrd(cp, admin);
  // The kubeconfig and CA as the container's uid 1000 reads them, the CA at its path inside.
  kubeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rayshift-image-kube-'));
  fs.copyFileSync(cp.caFile, path.join(kubeDir, 'ca.crt'));
  fs.writeFileSync(path.join(kubeDir, 'config'), fs.readFileSync(cp.kubeconfigPath, 'utf8').split(cp.caFile).join('/kube/ca.crt'));
  for (const f of ['', 'ca.crt', 'config']) fs.chownSync(path.join(kubeDir, f), 1000, 1000);
}, 600_000);

afterAll(async () => {
  for (const c of containers) {
    try {
      podman(['stop', '--time', '10', c.name]);
    } catch {
      // already gone
    }
  }
  admin?.close();
  await cp?.stop();
  if (kubeDir) fs.rmSync(kubeDir, { recursive: true, force: true });
});

test('the image runs as uid 1000, is labelled with the package version, and has no shell', () => {
  const config = JSON.parse(podman(['image', 'inspect', '--format', '{{json .Config}}', image])) as { User: string; Labels: Record<string, string>; Entrypoint: string[] };
  expect(config.User).toBe('1000:1000');
  expect(config.Labels['org.opencontainers.image.version']).toBe(VERSION);
  expect(config.Entrypoint).toEqual(['/usr/local/bin/node', '/app/node_modules/rayshift/bin/rayshift.js']);
  expect(podman(['run', '--rm', image, '--version']).trim()).toBe(VERSION);
  expect(() => podman(['run', '--rm', '--entrypoint', '/bin/sh', image, '-c', 'true'])).toThrow();
});

test('the operator in the container gets ready and reconciles a rayshift RayService; the API server from the same image serves it', async () => {
  const port = await freePort();
  const operator = runContainer(`rayshift-operator-test-${process.pid}`, ['operator', '--kubeconfig', '/kube/config', '--http-port', String(port)]);
  await waitForContainer(operator, async () => (await httpStatus(`http://127.0.0.1:${port}/readyz`)) === 200, "the operator container's /readyz");

  await createNamespace(admin, 'image');
  await admin.create(rayService('image', 'llm'));
  await waitForContainer(operator, async () => (await admin.list(RAYCLUSTER, { namespace: 'image' })).items.length === 1, 'the RayCluster the operator creates');
  const [cluster] = (await admin.list(RAYCLUSTER, { namespace: 'image' })).items;
  expect(cluster.metadata.ownerReferences?.map((o) => `${o.apiVersion}/${o.kind}/${o.name}`)).toEqual(['rayshift.dev/v1alpha1/RayService/llm']);
  await waitForContainer(operator, async () => ((await admin.tryGet(RAYSHIFT_RAYSERVICE, 'llm', 'image'))?.status as { phase?: string } | undefined)?.phase !== undefined, 'the status the operator writes');
  await waitForContainer(operator, async () => operator.log.some((l) => l.includes('"rayservice":"image/llm"') && l.includes('createPendingCluster')), "the operator's log of its step");

  const apiPort = await freePort();
  const api = runContainer(`rayshift-api-server-test-${process.pid}`, ['api-server', '--kubeconfig', '/kube/config', '--insecure-local', '--listen', `127.0.0.1:${apiPort}`]);
  const url = `http://127.0.0.1:${apiPort}/apis/rayshift/v1/namespaces/image/rayservices`;
  await waitForContainer(api, async () => (await httpStatus(url)) === 200, 'the API server container');
  const listed = (await (await fetch(url)).json()) as { rayServices: { name: string; executor: string }[] };
  expect(listed.rayServices.map((s) => `${s.name} ${s.executor}`)).toEqual(['llm EXECUTOR_OPERATOR']);
});
