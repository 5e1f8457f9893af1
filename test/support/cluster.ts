/**
 * A test cluster that is a cluster: the real control plane (`controlplane.ts`) plus the real
 * kube-controller-manager, kube-scheduler and kwok (fake Nodes whose Pods run to Ready by the stages
 * in `kwok-stages.yaml`), and on request the real KubeRay operator and RBG controller, each a child
 * process on loopback with its log in a file.
 *
 * Builds: `npm run controlplane:build` (etcd, kube-apiserver, kube-scheduler, kube-controller-manager)
 * and `bash scripts/build-cluster.sh` (kwok, rbgs, kuberay-operator; `cluster-bin-dir.sh` pins the
 * versions). A missing binary fails `startTestCluster` with a message naming the build.
 *
 * Nothing talks to a Pod: kwok only writes Pod status (Running, Ready, IPs, container images), so
 * KubeRay and RBG see their Pods come up, and kube-controller-manager fills EndpointSlices, collects
 * garbage and finishes namespace deletion as in a real cluster. The kubelet's final delete of a
 * terminating Pod (by UID, once its finalizers are gone) is `simulated-kubelet-deleter.ts`, in this
 * process: kwok's own delete Stage deletes by name and killed the Pods StatefulSets recreate at once. A test wraps its body in
 * `printLogsOnFailure` so that a failure prints the tail of every log and keeps the logs.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { KubeClient } from '../../lib/runtime/kube/client';
import { ControlPlane, ExtraToken, startControlPlane } from './controlplane';
import { clusterBinDir, controllerCrdFiles, locateBinaries, rbgTool, type ClusterRbg, type ClusterTool } from './cluster-files';
import { freePorts, httpGet, logTail, pollUntil, Proc, Supervisor } from './processes';
import { prepareRbgWebhook, RBGS_WEBHOOK_LOCK, untilRbgWebhookEnforced } from './rbg-v08-webhook';
import { SimulatedKubeletDeleter, startSimulatedKubeletDeleter } from './simulated-kubelet-deleter';

/** Options of `startTestCluster`. */
export interface ClusterOptions {
  /** Run KubeRay's operator (and install KubeRay's CRDs, RayJob included). @default false */
  readonly kuberay?: boolean;
  /**
   * Run RBG's controller (and install every CRD it checks for at start-up): `true` or `'v0.7'` runs
   * v0.7.0, `'v0.6'` v0.6.0 (`v1alpha1` groups, StatefulSets), `'v0.8'` v0.8.0-alpha.5 with its real
   * validating webhook (`rbg-v08-webhook.ts`; one such cluster per machine at a time). @default false
   */
  readonly rbg?: ClusterRbg;
  /** How many fake Nodes kwok manages. @default 2 */
  readonly nodes?: number;
  /** Further CRD files to install before the controllers start. */
  readonly crds?: readonly string[];
  /** How long each component may take to become ready. @default 120 s */
  readonly readyTimeoutMs?: number;
  /**
   * Further command-line flags of KubeRay's operator, after the cluster's own (e.g.
   * `--use-kubernetes-proxy`, so that it reaches Ray through kube-apiserver's proxy). @default none
   */
  readonly kuberayArgs?: readonly string[];
  /** Further kube-apiserver flags (e.g. admission plugins). @default none */
  readonly apiserverArgs?: readonly string[];
  /** Users besides the admin, in the control plane's static token file. @default none */
  readonly extraTokens?: readonly ExtraToken[];
  /**
   * First two octets of the Pod network: Node `i` gets `<podNetwork>.<i+1>.0/24`. A bench that puts
   * Pod IPs on a host interface picks its own so that it never clashes with another test's. @default '10.244'
   */
  readonly podNetwork?: string;
}

/** A running test cluster. */
export interface TestCluster {
  /** The control plane (admin kubeconfig, `request`, …). */
  readonly cp: ControlPlane;
  /** Names of the fake Nodes, all Ready and schedulable. */
  readonly nodes: readonly string[];
  /** Log file of every process, by name (`kube-apiserver`, `etcd`, `kube-scheduler`, …). */
  readonly logs: Readonly<Record<string, string>>;
  /**
   * Runs `body`; when it throws, prints the last lines of every log, keeps all logs in a folder
   * that outlives `stop()` (named in the output) and rethrows.
   */
  printLogsOnFailure<T>(body: () => Promise<T>): Promise<T>;
  /** A log file for an in-process part (the operator a test runs), printed and kept with the processes' logs. */
  logFile(name: string): string;
  /** Stops every process (controllers first) and removes the temporary folders. Idempotent. */
  stop(): Promise<void>;
}

/**
 * How long a cluster running RBG v0.8 waits for the machine's lock on rbgs' webhook port: the test
 * cluster's suites run two at a time, and the other may hold a v0.8 cluster for all its cases.
 */
const RBGS_WEBHOOK_LOCK_WAIT_MS = 30 * 60_000;

/**
 * The time a suite's `beforeAll` gives `startTestCluster` with `rbg` and `setupMs` for the rest of
 * its set-up: a cluster with RBG v0.8 may first wait for another suite's to stop.
 */
export function clusterStartTimeoutMs(rbg?: ClusterRbg, setupMs = 300_000): number {
  return setupMs + (rbg === 'v0.8' ? RBGS_WEBHOOK_LOCK_WAIT_MS : 0);
}

/** Annotation that marks a Node as kwok's (`--manage-nodes-with-annotation-selector`). */
export const KWOK_NODE_ANNOTATION = 'kwok.x-k8s.io/node';

/** Starts the control plane, the controller manager, the scheduler, kwok with Ready Nodes, then KubeRay and RBG as asked. */
export async function startTestCluster(opts: ClusterOptions = {}): Promise<TestCluster> {
  const binaries = locateBinaries(opts);
  const crds = [...(await controllerCrdFiles(opts)), ...(opts.crds ?? [])];
  const cp = await startControlPlane({
    crds,
    ...(opts.apiserverArgs ? { apiserverArgs: opts.apiserverArgs } : {}),
    ...(opts.extraTokens ? { extraTokens: opts.extraTokens } : {}),
  });
  const cluster = new LocalCluster(cp, binaries, opts);
  try {
    await cluster.start();
    return cluster;
  } catch (e) {
    cluster.printLogs();
    await cluster.stop();
    throw e;
  }
}

class LocalCluster implements TestCluster {
  readonly nodes: string[];
  readonly logs: Record<string, string>;
  private readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rayshift-cluster-'));
  private readonly supervisor = new Supervisor(this.dir, 'RAYSHIFT_KEEP_CONTROLPLANE');
  private readonly procs: Proc[] = [];
  private readonly readyTimeoutMs: number;
  private keptLogs?: string;
  private lockProc?: Proc;
  private deleterClient?: KubeClient;
  private deleter?: SimulatedKubeletDeleter;
  private stopped = false;

  constructor(
    readonly cp: ControlPlane,
    private readonly bin: Record<string, string>,
    private readonly opts: ClusterOptions,
  ) {
    this.readyTimeoutMs = opts.readyTimeoutMs ?? 120_000;
    this.nodes = Array.from({ length: opts.nodes ?? 2 }, (_, i) => `kwok-node-${i}`);
    this.logs = { etcd: cp.etcdLog, 'kube-apiserver': cp.apiserverLog };
  }

  async start(): Promise<void> {
    const kc = this.cp.kubeconfigPath;
    const [kcmPort, schedPort, kwokPort, rayMetrics, rayProbe, rbgProbe] = await freePorts(6);
    // Both check tokens and permissions through these kubeconfigs. The control plane has no
    // request-header (front proxy) CA, so looking it up would only log errors.
    const delegation = (name: string) => [
      `--kubeconfig=${kc}`,
      `--authentication-kubeconfig=${kc}`,
      `--authorization-kubeconfig=${kc}`,
      '--authentication-skip-lookup',
      '--leader-elect=false',
      '--bind-address=127.0.0.1',
      `--cert-dir=${path.join(this.dir, name)}`,
      '--v=2',
    ];
    const kcm = this.launch('kube-controller-manager', [
      ...delegation('kube-controller-manager'),
      `--secure-port=${kcmPort}`,
      `--root-ca-file=${this.cp.caFile}`,
      '--use-service-account-credentials=false',
    ]);
    const sched = this.launch('kube-scheduler', [...delegation('kube-scheduler'), `--secure-port=${schedPort}`]);
    const kwok = this.launch(
      'kwok',
      [
        `--kubeconfig=${kc}`,
        `--config=${path.join(__dirname, 'kwok-stages.yaml')}`,
        '--manage-all-nodes=false',
        `--manage-nodes-with-annotation-selector=${KWOK_NODE_ANNOTATION}=fake`,
        `--server-address=127.0.0.1:${kwokPort}`,
        '--node-lease-duration-seconds=40',
        `--cidr=${this.opts.podNetwork ?? '10.244'}.0.1/16`,
      ],
      // kwok also reads ~/.kwok/kwok.yaml when it exists: a HOME of its own keeps the user's out.
      { HOME: this.dir },
    );
    await Promise.all([
      this.ready(kcm, `https://127.0.0.1:${kcmPort}/healthz`),
      this.ready(sched, `https://127.0.0.1:${schedPort}/readyz`),
      this.ready(kwok, `http://127.0.0.1:${kwokPort}/healthz`),
    ]);
    await this.createNodes([kcm, kwok]);
    this.deleterClient = KubeClient.fromKubeconfig(kc, { fieldManager: 'simulated-kubelet' });
    this.deleter = startSimulatedKubeletDeleter(this.deleterClient, this.nodes);
    await this.deleter.synced();

    const controllers: Promise<void>[] = [];
    if (this.opts.kuberay) {
      const ray = this.launch('kuberay-operator', [
        `--kubeconfig=${kc}`,
        '--enable-leader-election=false',
        `--metrics-addr=127.0.0.1:${rayMetrics}`,
        `--health-probe-bind-address=127.0.0.1:${rayProbe}`,
        '--log-stdout-encoder=console',
        ...(this.opts.kuberayArgs ?? []),
      ]);
      controllers.push(this.ready(ray, `http://127.0.0.1:${rayProbe}/readyz`));
    }
    const rbgBuild = rbgTool(this.opts.rbg);
    if (rbgBuild) controllers.push(this.startRbg(rbgBuild, rbgProbe));
    await Promise.all(controllers);
    process.stderr.write(
      `test cluster: ${this.procs.map((p) => `${p.name} (pid ${p.child.pid})`).join(', ')} on ${this.cp.url}; logs in ${this.dir}\n`,
    );
  }

  /**
   * Starts RBG's controller. v0.6.0 has no webhooks (nor the flag); v0.7.0's would bootstrap
   * certificates for a Service, so it runs without. v0.8.0-alpha.5 runs with its real validating
   * webhook, on a fixed port: the cluster first takes the machine's lock on it.
   */
  private async startRbg(build: ClusterTool, probePort: number): Promise<void> {
    const args = [`--kubeconfig=${this.cp.kubeconfigPath}`, '--metrics-bind-address=0', '--leader-elect=false', `--health-probe-bind-address=127.0.0.1:${probePort}`];
    if (build !== 'rbg-v08') {
      const rbg = this.launch('rbgs', [...args, ...(build === 'rbg-v06' ? [] : ['--enable-webhooks=none'])]);
      return this.ready(rbg, `http://127.0.0.1:${probePort}/readyz`);
    }
    // `flock` holds the lock until it is killed (after rbgs, in stop()); a wait here is another
    // cluster's v0.8 run, not a failure.
    const lock = this.launch('rbgs-webhook-lock', [RBGS_WEBHOOK_LOCK, '-c', 'echo locked; exec sleep infinity'], {}, 'flock');
    this.lockProc = lock;
    await pollUntil(`the lock ${RBGS_WEBHOOK_LOCK} on rbgs' webhook port (another test cluster runs RBG v0.8)`, async () => (/^locked$/m.test(logTail(lock.log, 5)) ? undefined : 'held elsewhere'), {
      timeoutMs: RBGS_WEBHOOK_LOCK_WAIT_MS,
      procs: [lock],
    });
    const admin = KubeClient.fromKubeconfig(this.cp.kubeconfigPath);
    try {
      const env = await prepareRbgWebhook(admin, clusterBinDir(build, 'version'), path.join(this.dir, 'rbgs-webhook'));
      const rbg = this.launch('rbgs', [...args, '--enable-webhooks=all'], env);
      await this.ready(rbg, `http://127.0.0.1:${probePort}/readyz`);
      await untilRbgWebhookEnforced(admin, 'default', this.readyTimeoutMs);
    } finally {
      admin.close();
    }
  }

  printLogs(lines = 60): void {
    const parts = Object.entries(this.logs).map(([name, file]) => `--- ${name}: last ${lines} lines of ${file}\n${logTail(file, lines)}`);
    process.stderr.write(`${parts.join('\n')}\n`);
  }

  logFile(name: string): string {
    const file = path.join(this.dir, `${name}.log`);
    this.logs[name] = file;
    return file;
  }

  async printLogsOnFailure<T>(body: () => Promise<T>): Promise<T> {
    try {
      return await body();
    } catch (e) {
      this.printLogs();
      this.keepLogs();
      throw e;
    }
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    // Controllers first, so that none of them logs the control plane going away as its own failure.
    await Promise.all(this.procs.filter((p) => p !== this.lockProc).map((p) => this.supervisor.kill(p, 'SIGTERM', 10_000)));
    if (this.deleter) {
      await this.deleter.stop();
      const c = this.deleter.counts();
      process.stderr.write(`test cluster: simulated kubelet deleter: ${c.deleted} deleted, ${c.alreadyGone} already gone (404), ${c.nameReused} name reused by a newer Pod (409), ${c.failures.length} failed${c.failures.length ? `: ${c.failures.slice(0, 5).join('; ')}` : ''}\n`);
    }
    this.deleterClient?.close();
    // The webhook port's lock goes once rbgs no longer holds the port.
    if (this.lockProc) await this.supervisor.kill(this.lockProc, 'SIGTERM', 10_000);
    this.keepLogs(false);
    this.supervisor.release();
    await this.cp.stop();
    if (this.keptLogs) process.stderr.write(`test cluster: logs kept in ${this.keptLogs}\n`);
  }

  /** Copies every log into a folder that outlives `stop()`; with `force` false, only once one was asked for. */
  private keepLogs(force = true): void {
    if (!force && this.keptLogs === undefined) return;
    this.keptLogs ??= fs.mkdtempSync(path.join(os.tmpdir(), 'rayshift-cluster-logs-'));
    for (const [name, file] of Object.entries(this.logs)) {
      if (fs.existsSync(file)) fs.copyFileSync(file, path.join(this.keptLogs, `${name}.log`));
    }
  }

  private launch(name: string, args: string[], env: NodeJS.ProcessEnv = {}, file = this.bin[name]): Proc {
    const log = path.join(this.dir, `${name}.log`);
    this.logs[name] = log;
    const p = this.supervisor.launch(name, file, args, log, {
      env: { ...process.env, KUBECONFIG: this.cp.kubeconfigPath, ...env },
    });
    this.procs.push(p);
    return p;
  }

  private ready(p: Proc, url: string): Promise<void> {
    return pollUntil(
      `${p.name} at ${url}`,
      async () => {
        const r = await httpGet(url);
        return r.status === 200 ? undefined : `HTTP ${r.status} ${r.text.trim().slice(0, 300)}`;
      },
      { timeoutMs: this.readyTimeoutMs, procs: [p], logs: [{ file: p.log, lines: 40 }] },
    );
  }

  /**
   * Creates the fake Nodes and waits until each is Ready (kwok) and schedulable (the controller
   * manager removes the not-ready taint that admission puts on every new Node).
   */
  private async createNodes(procs: Proc[]): Promise<void> {
    const net = this.opts.podNetwork ?? '10.244';
    for (const [i, name] of this.nodes.entries()) {
      const r = await this.cp.request('POST', '/api/v1/nodes', {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: {
          name,
          annotations: { [KWOK_NODE_ANNOTATION]: 'fake' },
          labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', type: 'kwok' },
        },
        spec: { podCIDR: `${net}.${i + 1}.0/24`, podCIDRs: [`${net}.${i + 1}.0/24`] },
      });
      if (r.status !== 201) throw new Error(`creating Node ${name}: HTTP ${r.status}: ${JSON.stringify(r.body).slice(0, 500)}`);
    }
    await pollUntil(
      `Nodes ${this.nodes.join(', ')} to be Ready without taints`,
      async () => {
        const r = await this.cp.request('GET', '/api/v1/nodes?labelSelector=type%3Dkwok');
        const byName = new Map<string, any>(((r.body?.items ?? []) as any[]).map((n) => [n.metadata.name, n]));
        for (const name of this.nodes) {
          const n = byName.get(name);
          const ready = (n?.status?.conditions ?? []).find((c: { type: string }) => c.type === 'Ready');
          if (ready?.status !== 'True') return `${name}: Ready=${ready?.status ?? 'missing'}`;
          if ((n.spec?.taints ?? []).length > 0) return `${name}: taints ${JSON.stringify(n.spec.taints)}`;
        }
        return undefined;
      },
      { timeoutMs: this.readyTimeoutMs, procs, logs: procs.map((p) => ({ file: p.log, lines: 30 })) },
    );
  }
}

/**
 * Polls GET `urlPath` on `cluster`'s API server until `check` returns undefined for the answer (else
 * the reason it keeps waiting, shown when `timeoutMs` runs out); resolves to the last body.
 */
export async function getWhen(
  cluster: TestCluster,
  urlPath: string,
  what: string,
  check: (body: any, status: number) => string | undefined,
  timeoutMs = 90_000,
): Promise<any> {
  let body: any;
  await pollUntil(
    what,
    async () => {
      const r = await cluster.cp.request('GET', urlPath);
      body = r.body;
      return check(r.body, r.status);
    },
    { timeoutMs, intervalMs: 500 },
  );
  return body;
}
