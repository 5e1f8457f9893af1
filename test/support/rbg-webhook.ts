/**
 * TEST-ONLY: RBG v0.8's validating admission webhook for RoleBasedGroups, served from this process
 * over HTTPS and registered with a real kube-apiserver (a ValidatingWebhookConfiguration with a
 * URL and a throwaway CA made with `openssl`), so every create and update of a group — the GitOps
 * applies and the operator's JSON patches alike — is admitted or denied as an RBG v0.8 cluster
 * would. It applies upstream's `ValidateRollingUpdate` and, on updates, `ValidateScalingAdapterReplicas`
 * through lib/spec (`checkWebhookRollingUpdate`, `validateRoleBasedGroupUpdate`), reading
 * ScalingAdapters from the API server as upstream does. Status writes are not sent to it (the
 * configuration names `rolebasedgroups`, not `rolebasedgroups/status`), as upstream's.
 */
import * as fs from 'node:fs';
import * as https from 'node:https';
import { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { KubeClient } from '../../lib/runtime/kube/client';
import { KubeObject } from '../../lib/runtime/kube/types';
import { ProblemList } from '../../lib/spec/problem';
import { checkWebhookRollingUpdate, scalingAdapterName, validateRoleBasedGroupUpdate } from '../../lib/spec/rbg-releases';
import { roleRollingUpdate } from '../../lib/spec/rbg-roles';
import { JsonObject, asArray, asObject, isObject } from '../../lib/spec/read';
import { makeWebhookCertificate } from './webhook-certificate';
import { untilRbgWebhookEnforced } from './rbg-v08-webhook';

/** The ScalingAdapter resource the update rule reads. */
export const SCALING_ADAPTER_TYPE = { apiVersion: 'workloads.x-k8s.io/v1alpha2', kind: 'RoleBasedGroupScalingAdapter', plural: 'rolebasedgroupscalingadapters', namespaced: true } as const;

/** One admission decision. */
export interface WebhookReview {
  readonly operation: string;
  readonly name: string;
  /** Who sent the request (`userInfo.username`). */
  readonly user: string;
  readonly allowed: boolean;
  readonly message?: string;
}

/** A running simulated RBG v0.8 webhook. */
export interface SimulatedRbgWebhook {
  /** Every review answered, in order. */
  readonly reviews: WebhookReview[];
  /** Deletes the ValidatingWebhookConfiguration and stops the server. */
  stop(): Promise<void>;
}

const CONFIG_NAME = 'rbg-v08-simulated';

/**
 * Starts the webhook, registers it and resolves once the API server enforces it: a server-side
 * dry-run create of a group whose partition equals its replicas in `namespace` is denied.
 */
export async function startRbgWebhook(client: KubeClient, namespace: string): Promise<SimulatedRbgWebhook> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rbg-webhook-'));
  const reviews: WebhookReview[] = [];
  const tls = makeWebhookCertificate(dir, ['IP:127.0.0.1']);

  const server = https.createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { request: JsonObject };
      const request = review.request;
      decide(client, request).then(
        (message) => {
          const object = asObject(request.object);
          reviews.push({ operation: String(request.operation), name: String(asObject(object.metadata).name), user: String(asObject(request.userInfo).username), allowed: message === undefined, ...(message ? { message } : {}) });
          res.setHeader('Content-Type', 'application/json');
          res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: request.uid, allowed: message === undefined, ...(message ? { status: { code: 403, message } } : {}) } }));
        },
        (err: Error) => {
          res.statusCode = 500;
          res.end(err.message);
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await client.create({
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: CONFIG_NAME },
    webhooks: [
      {
        name: 'vrolebasedgroup.kb.io',
        clientConfig: { url: `https://127.0.0.1:${port}/validate-workloads-x-k8s-io-v1alpha2-rolebasedgroup`, caBundle: Buffer.from(tls.caCert).toString('base64') },
        rules: [{ apiGroups: ['workloads.x-k8s.io'], apiVersions: ['v1alpha2'], operations: ['CREATE', 'UPDATE'], resources: ['rolebasedgroups'] }],
        failurePolicy: 'Fail',
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
      },
    ],
  } as KubeObject);
  await untilRbgWebhookEnforced(client, namespace);

  return {
    reviews,
    async stop() {
      await client.delete({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', plural: 'validatingwebhookconfigurations', namespaced: false }, CONFIG_NAME, undefined).catch(() => undefined);
      // The API server keeps its connection alive; close() alone would wait for it.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Upstream's create/update validation of one request; the denial message, or undefined when admitted. */
async function decide(client: KubeClient, request: JsonObject): Promise<string | undefined> {
  const group = asObject(request.object);
  const problems = new ProblemList();
  asArray(asObject(group.spec).roles).forEach((value, i) => {
    const role = asObject(value);
    if (!isObject(asObject(role.rolloutStrategy).rollingUpdate)) return;
    checkWebhookRollingUpdate(problems, `spec.roles[${i}].rolloutStrategy.rollingUpdate`, roleRollingUpdate(role), (role.replicas ?? 1) as number);
  });
  if (request.operation === 'UPDATE') {
    const name = String(asObject(group.metadata).name);
    const namespace = String(request.namespace);
    const adapters = new Map<string, number | undefined>();
    for (const role of asArray(asObject(group.spec).roles).map(asObject)) {
      if (asObject(role.scalingAdapter).enable !== true) continue;
      const adapter = await client.tryGet(SCALING_ADAPTER_TYPE, scalingAdapterName(name, String(role.name)), namespace);
      const replicas = asObject(adapter?.spec).replicas;
      adapters.set(String(role.name), typeof replicas === 'number' ? replicas : undefined);
    }
    problems.addAll(validateRoleBasedGroupUpdate(request.oldObject, group, (role) => adapters.get(role)));
  }
  const { errors } = problems.result();
  return errors.length === 0 ? undefined : errors.map((e) => `${e.path}: ${e.message}`).join('; ');
}
