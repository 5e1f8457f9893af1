/**
 * The operator as the image's container (scripts/build-operator-image.sh; podman, `--init`, host
 * network) on the test cluster (test/support/operator-env.ts: the real KubeRay, kwok Pods, TEST-ONLY
 * Gateway status writer and Serve dashboards on loopback): the same full incremental upgrade as the
 * in-process operator's in cluster-operator-upgrade.test.ts, every watched weight change following
 * the engine's plan.
 */
import * as fs from 'node:fs';
import { ImageContainer, OperatorImage, buildOperatorImage, kubeconfigForContainers, runImage, waitForContainer } from '../support/operator-container';
import { expectIncrementalUpgradeFollowsPlan } from '../support/incremental-upgrade';
import { OperatorEnv, startOperatorEnv } from '../support/operator-env';

let image: OperatorImage;
let env: OperatorEnv;
let kubeDir: string;
let operator: ImageContainer;

beforeAll(async () => {
  image = buildOperatorImage();
  env = await startOperatorEnv();
  kubeDir = kubeconfigForContainers(env.cp);
  operator = runImage(image, kubeDir, `rayshift-operator-cluster-${process.pid}`, ['operator', '--kubeconfig', '/kube/config', '--dashboard-address-template', env.fleet.template, '--http-port', '0']);
  await waitForContainer(operator, () => operator.log.some((l) => l.includes('watches synced')), 'the operator container to sync its watches');
}, 600_000);

afterAll(async () => {
  operator?.stop();
  await env?.stop();
  if (kubeDir) fs.rmSync(kubeDir, { recursive: true, force: true });
});

test('a full incremental upgrade by the container (maxSurge 50, step 25, interval 1 s): every watched weight change follows the plan', async () => {
  await expectIncrementalUpgradeFollowsPlan(env, 'image-upgrade');
}, 180_000);
