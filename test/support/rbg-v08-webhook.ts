/**
 * RBG v0.8.0-alpha.5's REAL validating webhook in the test cluster (`cluster.ts`, `rbg: 'v0.8'`).
 *
 * How upstream's `rbgs` serves it (cmd/rbgs/main.go, pkg/webhook/certmanager.go): with
 * `--enable-webhooks=all` (its default) it reads the Secret `rbgs-webhook-cert` in `$POD_NAMESPACE`
 * (making a self-signed one for `rbgs-webhook-service.<ns>.svc` when there is none, or when the one
 * there does not verify for that name six months ahead), writes it into the fixed folder
 * /tmp/k8s-webhook-server/certs, serves on controller-runtime's default port 9443 (no flag sets
 * either), and patches its CA into every webhook of the ValidatingWebhookConfiguration
 * `rbgs-validating-webhook-configuration`, exiting when that configuration does not exist.
 *
 * So the test support makes the certificate (`openssl`: a CA, and a serving certificate for the
 * Service name and 127.0.0.1) and puts it in that Secret, and registers the chart's configuration
 * (config/webhook/manifests.yaml of the release's source tree, with config/default's `rbgs-` name
 * prefix) with each webhook's Service reference replaced by the URL of the controller's webhook
 * server on loopback, with that CA. The fixed port and folder allow one such controller per machine:
 * `lockWebhookPort` serializes the clusters that run one.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { projectRoot } from '../../lib/crds/resolve';
import { KubeApiError } from '../../lib/runtime/kube/errors';
import { KubeClient } from '../../lib/runtime/kube/client';
import { KubeObject } from '../../lib/runtime/kube/types';
import { waitFor } from './wait-at-most';
import { makeWebhookCertificate } from './webhook-certificate';

/** The port rbgs v0.8.0-alpha.5 serves its webhooks on (controller-runtime's default; rbgs has no flag for it). */
export const RBGS_WEBHOOK_PORT = 9443;
/** The namespace rbgs reads its certificate Secret from (`$POD_NAMESPACE`; the chart's namespace). */
export const RBGS_NAMESPACE = 'rbgs-system';
/** The file `flock` holds while a cluster runs rbgs v0.8 (its port and certificate folder are fixed). */
export const RBGS_WEBHOOK_LOCK = path.join(os.tmpdir(), `rayshift-rbgs-webhook-${RBGS_WEBHOOK_PORT}.lock`);

/**
 * The source tree of RBG `version` that `scripts/build-cluster.sh` builds from: `$RAYSHIFT_UPSTREAM`
 * (default ../shared/upstream), else its clone of the tag in the cache; undefined when neither is there.
 */
export function rbgSourceTree(version: string): string | undefined {
  const trees = [
    path.join(process.env.RAYSHIFT_UPSTREAM ?? path.join(projectRoot(), '..', 'shared', 'upstream'), 'rbg', version),
    path.join(process.env.RAYSHIFT_CACHE ?? path.join(os.homedir(), '.cache', 'rayshift'), 'upstream', 'rbg', version),
  ];
  return trees.find((t) => fs.existsSync(path.join(t, 'go.mod')));
}

/**
 * The chart's ValidatingWebhookConfiguration of RBG `version` as kustomize renders it (name prefix of
 * config/default), each webhook calling `https://127.0.0.1:<port><path>` with `caPem` as its CA.
 */
export function rbgWebhookConfiguration(version: string, caPem: string, port = RBGS_WEBHOOK_PORT): KubeObject {
  const tree = rbgSourceTree(version);
  if (!tree) throw new Error(`no source tree of RBG ${version} (../shared/upstream/rbg/${version} or its clone in the cache): run \`bash scripts/build-cluster.sh rbg-v08\` first`);
  const prefix = String((parse(fs.readFileSync(path.join(tree, 'config', 'default', 'kustomization.yaml'), 'utf8')) as { namePrefix?: string }).namePrefix ?? '');
  const docs = parseAllDocuments(fs.readFileSync(path.join(tree, 'config', 'webhook', 'manifests.yaml'), 'utf8')).map((d) => d.toJSON() as KubeObject | null);
  const config = docs.find((d) => d?.kind === 'ValidatingWebhookConfiguration');
  if (!config) throw new Error(`${tree}/config/webhook/manifests.yaml has no ValidatingWebhookConfiguration`);
  const webhooks = ((config as unknown as { webhooks: { clientConfig: { service?: { path?: string } } }[] }).webhooks ?? []).map((w) => ({
    ...w,
    clientConfig: { url: `https://127.0.0.1:${port}${w.clientConfig.service?.path ?? '/'}`, caBundle: Buffer.from(caPem).toString('base64') },
  }));
  return { ...config, metadata: { name: `${prefix}${config.metadata.name}` }, webhooks } as unknown as KubeObject;
}

/**
 * Makes the webhook's certificate in `dir`, stores it where rbgs looks for it (Secret
 * `rbgs-webhook-cert` in `rbgs-system`, in the key names of upstream's SecretCertWriter) and
 * registers the chart's configuration. Returns the environment rbgs needs.
 */
export async function prepareRbgWebhook(client: KubeClient, version: string, dir: string): Promise<NodeJS.ProcessEnv> {
  fs.mkdirSync(dir, { recursive: true });
  // rbgs keeps a certificate only when it verifies for the Service name six months ahead.
  const tls = makeWebhookCertificate(dir, [`DNS:rbgs-webhook-service.${RBGS_NAMESPACE}.svc`, 'IP:127.0.0.1'], 400);
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: RBGS_NAMESPACE } });
  await client.create({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'rbgs-webhook-cert', namespace: RBGS_NAMESPACE },
    data: { 'ca-key.pem': b64(tls.caKey), 'ca-cert.pem': b64(tls.caCert), 'cert.pem': b64(tls.cert), 'key.pem': b64(tls.key), 'tls.crt': b64(tls.cert), 'tls.key': b64(tls.key) },
  } as KubeObject);
  await client.create(rbgWebhookConfiguration(version, tls.caCert));
  return { POD_NAMESPACE: RBGS_NAMESPACE };
}

/** Polls (every 100 ms, at most `timeoutMs`) until a dry-run create that breaks v0.8's partition rule is denied by a webhook. */
export async function untilRbgWebhookEnforced(client: KubeClient, namespace: string, timeoutMs = 30_000): Promise<void> {
  const probe = {
    apiVersion: 'workloads.x-k8s.io/v1alpha2',
    kind: 'RoleBasedGroup',
    metadata: { name: 'webhook-probe', namespace },
    spec: { roles: [{ name: 'r', replicas: 1, rolloutStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 1 } }, standalonePattern: { template: { spec: { containers: [{ name: 'c', image: 'x' }] } } } }] },
  };
  let unexpected: unknown;
  await waitFor(async () => {
    try {
      await client.create(probe as KubeObject, { dryRun: true });
      return 'the dry-run create was admitted';
    } catch (err) {
      // A webhook that is registered but not serving yet fails the call ("failed calling webhook").
      if (err instanceof KubeApiError && /failed calling webhook/.test(err.message)) return err.message;
      if (!(err instanceof KubeApiError && /denied the request/.test(err.message))) unexpected = err;
      return true;
    }
  }, 'the RBG webhook to be enforced after its registration', { timeoutMs, everyMs: 100 });
  if (unexpected !== undefined) throw unexpected;
}
