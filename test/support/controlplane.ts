/**
 * A real Kubernetes control plane for integration tests: upstream etcd and kube-apiserver, built from
 * Go modules by `scripts/build-controlplane.sh` (see `test/controlplane/`), run as child processes on
 * free loopback ports with their data in a temporary folder.
 *
 * - Authentication: a static token file (an admin in `system:masters` plus `extraTokens`) and
 *   ServiceAccount tokens (issuer and signing key are configured; see `serviceAccountToken`).
 * - Authorization: RBAC only, so unprivileged users get 403 until a (Cluster)RoleBinding exists.
 * - TLS: a throwaway CA and serving certificate (SAN 127.0.0.1, localhost) made with `openssl`;
 *   clients verify the server against `caFile`.
 * - No kube-controller-manager, scheduler or kubelet: objects are stored and validated, nothing
 *   reconciles them (no garbage collection, namespaces never finish terminating, no `default`
 *   ServiceAccount is created because the ServiceAccount admission plugin is off). `cluster.ts`
 *   starts a cluster that has them.
 *
 * Both processes run in their own process groups (see `processes.ts`). `stop()` kills them and
 * removes the folder; a watchdog that reads a pipe from this process does the same if this process
 * dies without `stop()`.
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { CrdProject, crdsOf, newestVersion } from '../../lib/crds/catalog';
import { resolveCrdFile } from '../../lib/crds/resolve';
import { appendTokens, controlPlaneBinDir, writeAdminKubeconfig, writeTestPki } from './controlplane-files';
import { freePorts, httpGet, isExecutable, pollUntil, Proc, Supervisor } from './processes';

/** A user of the static token file (`--token-auth-file`). */
export interface ExtraToken {
  /** Bearer token. */
  readonly token: string;
  /** User name, e.g. `alice`. */
  readonly user: string;
  /** User UID; defaults to `<user>-uid`. */
  readonly uid?: string;
  /** Groups, e.g. `['team-a']`; `system:authenticated` is added by the server. */
  readonly groups?: readonly string[];
}

/** Options of `startControlPlane`. */
export interface StartOptions {
  /** Local CRD YAML files (multi-document allowed) to install once the server is ready. */
  readonly crds?: readonly string[];
  /** Users besides the admin, written to the static token file. */
  readonly extraTokens?: readonly ExtraToken[];
  /** How long to wait for etcd and for `/readyz`, each; default 90 s. */
  readonly readyTimeoutMs?: number;
  /** Folder holding `etcd` and `kube-apiserver`; default `controlPlaneBinDir()`. */
  readonly binDir?: string;
  /** Further kube-apiserver flags, appended last (a repeated flag overrides the default). */
  readonly apiserverArgs?: readonly string[];
}

/** Options of one `ControlPlane.request`. */
export interface RequestOptions {
  /** Bearer token; default the admin token; `null` sends no Authorization header (anonymous). */
  readonly token?: string | null;
  /** Content-Type of the body; default `application/json` (use `application/merge-patch+json` etc. for PATCH). */
  readonly contentType?: string;
  /** Extra request headers (e.g. `Impersonate-User`). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** A response of the API server; `body` is parsed JSON when the server sent JSON, else text. */
export interface ApiResponse<T = any> {
  /** HTTP status code. */
  readonly status: number;
  /** Parsed JSON body (a `Status` object on errors), or the raw text for non-JSON responses. */
  readonly body: T;
  /** Response headers. */
  readonly headers: http.IncomingHttpHeaders;
}

/** A running etcd + kube-apiserver pair. */
export interface ControlPlane {
  /** `https://127.0.0.1:<port>` of kube-apiserver. */
  readonly url: string;
  /** Bearer token of the admin user (group `system:masters`). */
  readonly adminToken: string;
  /** A kubeconfig for the admin user (token auth, server verified against `caFile`). */
  readonly kubeconfigPath: string;
  /** PEM file of the CA that signed the serving certificate. */
  readonly caFile: string;
  /** PEM contents of `caFile`. */
  readonly ca: string;
  /** `http://127.0.0.1:<port>` of etcd. */
  readonly etcdUrl: string;
  /** The temporary folder (data, certificates, logs); removed by `stop()`. */
  readonly dir: string;
  /** Path of the kube-apiserver log (appended across restarts). */
  readonly apiserverLog: string;
  /** Path of the etcd log. */
  readonly etcdLog: string;
  /** Kills etcd and kube-apiserver and removes `dir` (kept when RAYSHIFT_KEEP_CONTROLPLANE=1). Idempotent. */
  stop(): Promise<void>;
  /** Stops kube-apiserver (SIGTERM) and starts it again with the same port, flags and etcd data. */
  restart(): Promise<void>;
  /** Creates (or replaces) every CRD in the files and waits until each is Established and served. */
  installCrds(files: readonly string[]): Promise<void>;
  /** Creates (or replaces) each CRD object and waits until it is Established and served (see `installCrds`). */
  installCrdObjects(crds: ReadonlyArray<Record<string, any>>): Promise<void>;
  /** Adds users to the static token file and restarts kube-apiserver so that it reads them. */
  addTokens(tokens: readonly ExtraToken[]): Promise<void>;
  /**
   * Returns a token of the ServiceAccount from the TokenRequest API, creating the ServiceAccount
   * (not the namespace) when it is missing.
   */
  serviceAccountToken(namespace: string, name: string, expirationSeconds?: number): Promise<string>;
  /** One HTTPS request to the API server; `body` objects are sent as JSON, strings as they are. */
  request<T = any>(method: string, path: string, body?: unknown, opts?: RequestOptions): Promise<ApiResponse<T>>;
}

const ADMIN_USER = 'rayshift-admin';
const SA_ISSUER = 'https://kubernetes.default.svc.cluster.local';
const PROGRAMS = ['etcd', 'kube-apiserver'] as const;

/** The CRD files of the newest pinned release of KubeRay, Gateway API and RBG (resolved to local paths). */
export async function upstreamCrdFiles(): Promise<string[]> {
  const projects: CrdProject[] = ['kuberay', 'gateway-api', 'rbg'];
  const crds = projects.flatMap((p) => crdsOf(p, newestVersion(p)));
  return Promise.all(crds.map((c) => resolveCrdFile(c)));
}

/** Starts etcd and kube-apiserver, waits until `/readyz` passes and installs `opts.crds`. */
export async function startControlPlane(opts: StartOptions = {}): Promise<ControlPlane> {
  const binDir = opts.binDir ?? controlPlaneBinDir();
  for (const p of PROGRAMS) {
    if (!isExecutable(path.join(binDir, p))) {
      throw new Error(
        `${p} not found in ${binDir}. Build the control plane with \`npm run controlplane:build\` ` +
          '(bash scripts/build-controlplane.sh; a few minutes when cold) or point RAYSHIFT_CONTROLPLANE_BIN at prebuilt binaries.',
      );
    }
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rayshift-cp-'));
  const cp = new LocalControlPlane(binDir, dir, opts);
  try {
    await cp.start();
    if (opts.crds?.length) await cp.installCrds(opts.crds);
    return cp;
  } catch (e) {
    await cp.stop();
    throw e;
  }
}

class LocalControlPlane implements ControlPlane {
  readonly adminToken = crypto.randomBytes(24).toString('hex');
  url = '';
  etcdUrl = '';
  readonly kubeconfigPath: string;
  readonly caFile: string;
  ca = '';
  readonly apiserverLog: string;
  readonly etcdLog: string;
  private readonly tokensFile: string;
  private readonly readyTimeoutMs: number;
  private apiserverArgs: string[] = [];
  private etcd?: Proc;
  private apiserver?: Proc;
  private supervisor?: Supervisor;
  private stopped = false;

  constructor(
    private readonly binDir: string,
    readonly dir: string,
    private readonly opts: StartOptions,
  ) {
    this.kubeconfigPath = path.join(dir, 'kubeconfig');
    this.caFile = path.join(dir, 'pki', 'ca.crt');
    this.apiserverLog = path.join(dir, 'kube-apiserver.log');
    this.etcdLog = path.join(dir, 'etcd.log');
    this.tokensFile = path.join(dir, 'tokens.csv');
    this.readyTimeoutMs = opts.readyTimeoutMs ?? 90_000;
  }

  async start(): Promise<void> {
    this.supervisor = new Supervisor(this.dir, 'RAYSHIFT_KEEP_CONTROLPLANE');
    const [etcdPort, peerPort, apiPort] = await freePorts(3);
    this.url = `https://127.0.0.1:${apiPort}`;
    this.etcdUrl = `http://127.0.0.1:${etcdPort}`;
    const peerUrl = `http://127.0.0.1:${peerPort}`;
    const d = this.dir;

    writeTestPki(this.dir);
    this.ca = fs.readFileSync(this.caFile, 'utf8');
    appendTokens(this.tokensFile, [{ token: this.adminToken, user: ADMIN_USER, uid: `${ADMIN_USER}-uid`, groups: ['system:masters'] }]);
    appendTokens(this.tokensFile, this.opts.extraTokens ?? []);
    writeAdminKubeconfig(this.kubeconfigPath, this.url, this.caFile, ADMIN_USER, this.adminToken);

    this.etcd = this.launch('etcd', [
      '--name=rayshift',
      `--data-dir=${path.join(d, 'etcd')}`,
      `--listen-client-urls=${this.etcdUrl}`,
      `--advertise-client-urls=${this.etcdUrl}`,
      `--listen-peer-urls=${peerUrl}`,
      `--initial-advertise-peer-urls=${peerUrl}`,
      `--initial-cluster=rayshift=${peerUrl}`,
      '--unsafe-no-fsync',
      '--log-level=warn',
    ], this.etcdLog);
    await this.waitFor('etcd', this.etcdLog, [this.etcd], async () => {
      const r = await httpGet(`${this.etcdUrl}/health`);
      return r.status === 200 && /"health":\s*"true"/.test(r.text) ? undefined : `HTTP ${r.status} ${r.text.trim()}`;
    });

    const pki = path.join(d, 'pki');
    this.apiserverArgs = [
      `--etcd-servers=${this.etcdUrl}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${apiPort}`,
      '--advertise-address=127.0.0.1',
      '--endpoint-reconciler-type=none',
      `--cert-dir=${pki}`,
      `--tls-cert-file=${path.join(pki, 'apiserver.crt')}`,
      `--tls-private-key-file=${path.join(pki, 'apiserver.key')}`,
      `--client-ca-file=${this.caFile}`,
      `--token-auth-file=${this.tokensFile}`,
      '--authorization-mode=RBAC',
      `--service-account-issuer=${SA_ISSUER}`,
      `--service-account-key-file=${path.join(d, 'sa.key')}`,
      `--service-account-signing-key-file=${path.join(d, 'sa.key')}`,
      '--service-cluster-ip-range=10.0.0.0/24',
      '--disable-admission-plugins=ServiceAccount',
      '--allow-privileged=true',
      '--profiling=false',
      ...(this.opts.apiserverArgs ?? []),
    ];
    await this.startApiserver();
  }

  async restart(): Promise<void> {
    this.assertRunning();
    if (this.apiserver) await this.supervisor!.kill(this.apiserver, 'SIGTERM', 30_000);
    await this.startApiserver();
  }

  async addTokens(tokens: readonly ExtraToken[]): Promise<void> {
    this.assertRunning();
    appendTokens(this.tokensFile, tokens);
    await this.restart();
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    const sup = this.supervisor;
    if (!sup) {
      fs.rmSync(this.dir, { recursive: true, force: true });
      return;
    }
    await Promise.all([this.apiserver, this.etcd].filter((p): p is Proc => !!p).map((p) => sup.kill(p, 'SIGKILL', 10_000)));
    // Everything is gone: remove the folder and release the watchdog without letting it act.
    sup.release();
  }

  async installCrds(files: readonly string[]): Promise<void> {
    this.assertRunning();
    const crds: Array<Record<string, any>> = [];
    for (const file of files) {
      const docs = parseAllDocuments(fs.readFileSync(file, 'utf8'));
      for (const [i, doc] of (Array.isArray(docs) ? docs : [docs]).entries()) {
        if (doc.errors.length) throw new Error(`${file}: YAML document ${i}: ${doc.errors[0].message}`);
        const obj = doc.toJS({ maxAliasCount: -1 }) as Record<string, any> | null;
        if (obj == null) continue;
        if (obj.kind !== 'CustomResourceDefinition' || obj.apiVersion !== 'apiextensions.k8s.io/v1') {
          throw new Error(`${file}: document ${i} is ${obj.apiVersion}/${obj.kind}, not an apiextensions.k8s.io/v1 CustomResourceDefinition`);
        }
        crds.push(obj);
      }
    }
    await this.installCrdObjects(crds);
  }

  async installCrdObjects(crds: ReadonlyArray<Record<string, any>>): Promise<void> {
    this.assertRunning();
    const base = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
    for (const crd of crds) {
      const name: string = crd.metadata?.name;
      let r = await this.request('POST', base, crd);
      if (r.status === 409) {
        const existing = await this.request('GET', `${base}/${name}`);
        const update = { ...crd, metadata: { ...crd.metadata, resourceVersion: existing.body?.metadata?.resourceVersion } };
        r = await this.request('PUT', `${base}/${name}`, update);
      }
      if (r.status >= 300) throw new Error(`installing CRD ${name}: HTTP ${r.status}: ${statusMessage(r.body)}`);
    }
    for (const crd of crds) {
      const name: string = crd.metadata.name;
      const group: string = crd.spec.group;
      const plural: string = crd.spec.names.plural;
      const served: string[] = (crd.spec.versions as Array<{ name: string; served: boolean }>).filter((v) => v.served).map((v) => v.name);
      await this.waitFor(`CRD ${name} to be Established and served`, this.apiserverLog, [], async () => {
        const r = await this.request('GET', `${base}/${name}`);
        const conds: Array<{ type: string; status: string; message?: string }> = r.body?.status?.conditions ?? [];
        const est = conds.find((c) => c.type === 'Established');
        if (est?.status !== 'True') return `Established=${est?.status ?? 'missing'} ${conds.map((c) => `${c.type}=${c.status} ${c.message ?? ''}`).join('; ')}`;
        for (const v of served) {
          const list = await this.request('GET', `/apis/${group}/${v}/${plural}?limit=1`);
          if (list.status !== 200) return `GET /apis/${group}/${v}/${plural}: HTTP ${list.status}`;
          // Discovery is published apart from the handlers, and after Established: a client that maps
          // kinds through discovery (rayshift's RestMapper) can still be told the kind is not served
          // (stop 44's pre-check: the fuzz suite's first create was refused "CRD not installed").
          const discovery = await this.request('GET', `/apis/${group}/${v}`);
          const resources: Array<{ name: string }> = discovery.body?.resources ?? [];
          if (discovery.status !== 200 || !resources.some((x) => x.name === plural)) return `GET /apis/${group}/${v}: HTTP ${discovery.status}, ${plural} not listed yet`;
        }
        return undefined;
      });
    }
  }

  async serviceAccountToken(namespace: string, name: string, expirationSeconds = 3600): Promise<string> {
    const sa = `/api/v1/namespaces/${namespace}/serviceaccounts`;
    const created = await this.request('POST', sa, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } });
    if (created.status >= 300 && created.status !== 409) {
      throw new Error(`creating ServiceAccount ${namespace}/${name}: HTTP ${created.status}: ${statusMessage(created.body)}`);
    }
    const r = await this.request('POST', `${sa}/${name}/token`, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { expirationSeconds },
    });
    if (r.status !== 201 || typeof r.body?.status?.token !== 'string') {
      throw new Error(`TokenRequest for ${namespace}/${name}: HTTP ${r.status}: ${statusMessage(r.body)}`);
    }
    return r.body.status.token;
  }

  request<T = any>(method: string, p: string, body?: unknown, opts: RequestOptions = {}): Promise<ApiResponse<T>> {
    const payload =
      body === undefined ? undefined : typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
    const headers: Record<string, string | number> = { Accept: 'application/json', ...(opts.headers ?? {}) };
    const token = opts.token === undefined ? this.adminToken : opts.token;
    if (token !== null) headers.Authorization = `Bearer ${token}`;
    if (payload !== undefined) {
      headers['Content-Type'] = opts.contentType ?? 'application/json';
      headers['Content-Length'] = Buffer.byteLength(payload);
    }
    const u = new URL(this.url);
    return new Promise((resolve, reject) => {
      const req = https.request(
        { host: u.hostname, port: u.port, method, path: p, headers, ca: this.ca, agent: false, timeout: 60_000 },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed: any = text;
            if (/json/.test(String(res.headers['content-type'] ?? '')) && text.length) {
              try {
                parsed = JSON.parse(text);
              } catch {
                parsed = text;
              }
            }
            resolve({ status: res.statusCode ?? 0, body: parsed as T, headers: res.headers });
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error(`${method} ${this.url}${p}: no response within 60 s`)));
      req.on('error', reject);
      req.end(payload);
    });
  }

  // --- internals -------------------------------------------------------------------------------

  private async startApiserver(): Promise<void> {
    this.apiserver = this.launch('kube-apiserver', this.apiserverArgs, this.apiserverLog);
    await this.waitFor('kube-apiserver /readyz', this.apiserverLog, [this.apiserver, this.etcd!], async () => {
      const r = await this.request('GET', '/readyz?verbose');
      if (r.status === 200) return undefined;
      const failing = String(r.body)
        .split('\n')
        .filter((l) => l.startsWith('[-]'))
        .join('; ');
      return `HTTP ${r.status} ${failing || String(typeof r.body === 'string' ? r.body : JSON.stringify(r.body)).slice(0, 300)}`;
    });
  }

  private assertRunning(): void {
    if (this.stopped) throw new Error(`control plane in ${this.dir} is stopped`);
  }

  private launch(name: string, args: string[], log: string): Proc {
    return this.supervisor!.launch(name, path.join(this.binDir, name), args, log);
  }

  /**
   * Polls `check` (undefined = ready, else a reason) until it passes, one of `procs` exits or the
   * timeout passes; failures name the reason and include the tail of `log` (and of etcd's log).
   */
  private waitFor(what: string, log: string, procs: Proc[], check: () => Promise<string | undefined>): Promise<void> {
    const logs = [{ file: log, lines: 40 }];
    if (log !== this.etcdLog) logs.push({ file: this.etcdLog, lines: 10 });
    return pollUntil(what, check, { timeoutMs: this.readyTimeoutMs, procs, logs });
  }
}

function statusMessage(body: unknown): string {
  if (body && typeof body === 'object' && 'message' in body) return String((body as { message: unknown }).message);
  return typeof body === 'string' ? body.slice(0, 500) : JSON.stringify(body)?.slice(0, 500) ?? '';
}
