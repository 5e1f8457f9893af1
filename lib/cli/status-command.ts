/**
 * `rayshift status NAME` (a `rayshift.dev` RayService, or `rbg/NAME` for a RoleBasedGroup whose
 * rollout rayshift executes), over a kubeconfig or, with `--api-server`, through the rayshift API
 * server (same output: both hand the same object to the same view), and the connection helpers the
 * steering verbs share (lib/cli/steer-command.ts). `--watch` follows the object:
 * on a terminal the screen is redrawn in place (with a live countdown), otherwise one line is
 * printed per change, which is what a CI log wants. Without a Kubernetes configuration they say
 * where they looked. The API server's client loads only with `--api-server`.
 */
import type { ApiClient } from '../apiserver/client';
import { KubeClient } from '../runtime/kube/client';
import { KubeconfigLookup, lookUpKubeconfig } from '../runtime/kube/kubeconfig-lookup';
import { KnownTypes, KubeObject } from '../runtime/kube/types';
import { RBG_V1ALPHA1_TYPE, RBG_V1ALPHA2_TYPE } from '../spec/object-names';
import { RAYSHIFT_RAYSERVICE } from '../spec/object-names';
import type { ApiAttempt } from './api-connection';
import { ApiConnectionOptions, apiConnectionProblem, plaintextTokenNotice, resolveToken } from './api-options';
import { EXIT, Output } from './commands';
import { GroupView, groupView, renderGroupLines, renderGroupScreen, rolloutFinished } from './rbg-status-view';
import { ServiceView, renderServiceLine, renderServiceScreen, serviceView, withoutTime } from './status-view';
import { StatusSource, kubeStatusSource } from './status-source';
import { Style } from './style';

export type { SteeringVerb } from './api-status-source';

/** How a command finds its cluster without `--api-server`: kubectl's `--kubeconfig` and `--context`. */
export interface KubeconfigOptions {
  /** kubeconfig file. @default $KUBECONFIG or ~/.kube/config */
  readonly kubeconfig?: string;
  /** kubeconfig context. @default the kubeconfig's current-context */
  readonly context?: string;
}

/** Options of `rayshift status`. */
export interface StatusOptions extends ApiConnectionOptions, KubeconfigOptions {
  /** Namespace. @default the kubeconfig context's, else `default` (`default` with `apiServer`) */
  readonly namespace?: string;
  /** Follow changes until interrupted (or until done with `untilDone`). */
  readonly watch?: boolean;
  /** With `watch`: stop once no upgrade is in flight; exit 1 if it ended without its spec serving. */
  readonly untilDone?: boolean;
  /** Print the status object as JSON (not with `watch`). */
  readonly json?: boolean;
}

/** Redraw period on a terminal (the countdown's resolution), ms. */
const REDRAW_MS = 100;
/** Reasons that end an upgrade without the new spec serving (phase `Failed`, a refused upgrade, ends it so too). */
const FAILED_REASONS = new Set(['Aborted', 'ProgressDeadlineExceeded', 'SurgeUnschedulable', 'RollbackComplete', 'UpgradeCancelled']);

/**
 * What the user reads when there is no Kubernetes configuration: each place looked at and what
 * was there, and how to give one.
 */
export function describeMissingKubeconfig(l: KubeconfigLookup): string {
  if (l.given) return `the kubeconfig ${l.given.path} (--kubeconfig) does not exist`;
  const lines = ['no Kubernetes configuration found; looked at:'];
  if (l.env.value !== undefined) {
    lines.push(`  $KUBECONFIG: ${l.env.value} (missing: ${l.env.missing.join(', ')}; with $KUBECONFIG set nothing else is looked at)`);
  } else {
    lines.push('  $KUBECONFIG: unset');
    lines.push(`  ~/.kube/config: ${l.home.path === undefined ? 'no home folder ($HOME is unset or unreadable)' : `${l.home.path} (missing)`}`);
    const why = [l.inCluster.host === undefined && 'KUBERNETES_SERVICE_HOST is unset', !l.inCluster.tokenExists && `no token at ${l.inCluster.tokenFile}`].filter(Boolean);
    lines.push(`  in-cluster: not in a pod (${why.join(', ')})`);
  }
  lines.push('Give a kubeconfig with --kubeconfig FILE or $KUBECONFIG, or go through the rayshift API server with --api-server URL.');
  return lines.join('\n');
}

/**
 * A client of the Kubernetes API from `--kubeconfig` or the default lookup, in `--context` when
 * given; undefined, after saying where it looked (or which context is missing), when there is none.
 */
export function clientFor(opts: KubeconfigOptions, io: Output): KubeClient | undefined {
  const lookup = lookUpKubeconfig({ kubeconfig: opts.kubeconfig });
  if (lookup.found === undefined) {
    io.err(`${io.errStyle.red('error:')} ${describeMissingKubeconfig(lookup)}\n`);
    return undefined;
  }
  try {
    const context = opts.context === undefined ? {} : { context: opts.context };
    return lookup.given ? KubeClient.fromKubeconfig(lookup.given.path, context) : KubeClient.fromDefault(context);
  } catch (e) {
    io.err(`${io.errStyle.red('error:')} ${(e as Error).message}\n`);
    return undefined;
  }
}

/** The API server's client, the status source over it and its error words; loaded only with `--api-server` (they need `@connectrpc/*` and `@bufbuild/protobuf`). */
export async function loadApiClient() {
  const [{ Code, ConnectError }, { connectApi, describeApiError }, { apiStatusSource, steerThroughApi }] = await Promise.all([
    import('@connectrpc/connect'),
    import('./api-connection'),
    import('./api-status-source'),
  ]);
  return { Code, ConnectError, connectApi, describeApiError, apiStatusSource, steerThroughApi };
}

type ApiModules = Awaited<ReturnType<typeof loadApiClient>>;

/** True once the service's current spec has been observed and no upgrade is in flight (none running, or one `capacityPolicy: fail` refused). */
export function upgradeDone(v: ServiceView): boolean {
  const e = v.engine;
  return e !== undefined && e.pendingClusterName === undefined && (e.phase === 'Running' || e.phase === 'Failed') && (v.generation === undefined || v.observedGeneration === v.generation);
}

/** How `status` reads, renders and judges one kind of object. */
interface Subject<V> {
  readonly what: string;
  view(obj: KubeObject): V;
  /** What `--json` prints. */
  json(obj: KubeObject): unknown;
  screen(v: V, now: number, style: Style): string[];
  lines(v: V, now: number): string[];
  /** Finished (for `--until-done`), and whether it finished without the new version. */
  finished(v: V): { done: boolean; failed: boolean; why?: string };
}

const RAYSERVICE_SUBJECT: Subject<ServiceView> = {
  what: 'RayService (rayshift.dev/v1alpha1)',
  view: serviceView,
  json: (obj) => obj.status ?? {},
  screen: renderServiceScreen,
  lines: (v, now) => [renderServiceLine(v, now)],
  finished: (v) => {
    const done = upgradeDone(v);
    const failed = done && (v.engine?.phase === 'Failed' || FAILED_REASONS.has(String(v.engine?.reason)));
    return { done, failed, why: v.engine?.reason };
  },
};

/** Through a kubeconfig `status` also shows KubeRay's own RayServices (`ray.io/v1`, executor `kuberay`), read-only. */
const ANY_RAYSERVICE_SUBJECT: Subject<ServiceView> = { ...RAYSERVICE_SUBJECT, what: 'RayService (rayshift.dev/v1alpha1 or ray.io/v1)' };

const RBG_SUBJECT: Subject<GroupView> = {
  what: 'RoleBasedGroup (workloads.x-k8s.io)',
  view: groupView,
  json: groupView,
  screen: renderGroupScreen,
  lines: renderGroupLines,
  finished: (v) => ({ ...rolloutFinished(v), why: v.coordinations.filter((c) => c.phase !== 'Complete').map((c) => `${c.name}: ${c.reason}`).join(', ') }),
};

/** `rbg/NAME` or `rolebasedgroup/NAME` names a RoleBasedGroup; anything else a RayService. */
export function parseTarget(target: string): { rbg: boolean; name: string } {
  const m = /^(rbg|rolebasedgroups?)\/(.+)$/i.exec(target);
  return m ? { rbg: true, name: m[2] } : { rbg: false, name: target.replace(/^(rayservices?(\.rayshift\.dev|\.ray\.io)?)\//i, '') };
}

/** One run of `status`: what it shows, from where, and how. */
interface StatusRun<V> {
  readonly source: StatusSource;
  readonly subject: Subject<V>;
  readonly namespace: string;
  readonly name: string;
  readonly opts: StatusOptions;
  readonly io: Output;
  /** Words a failure to follow the object. */
  readonly explain: (err: unknown) => string;
  /** Ends a watch. */
  readonly stop?: Promise<void>;
}

/**
 * `rayshift status TARGET` (a RayService name, or `rbg/NAME` for a RoleBasedGroup) through a
 * kubeconfig or, with `--api-server`, through the API server; resolves to the exit code. `stop` ends
 * a watch (SIGINT in the binary).
 */
export async function statusCommand(target: string, opts: StatusOptions, io: Output, stop?: Promise<void>): Promise<number> {
  const { rbg, name } = parseTarget(target);
  const problem = apiConnectionProblem(opts) ?? (rbg && opts.apiServer !== undefined ? 'status rbg/NAME reads RoleBasedGroups through a kubeconfig only; leave out --api-server' : undefined);
  if (problem !== undefined) return usageError(io, problem);
  if (opts.apiServer !== undefined) {
    const namespace = opts.namespace ?? 'default';
    const attempt = { verb: opts.watch ? 'watch' : 'read', namespace, name };
    const modules = await loadApiClient();
    return throughApi(modules, { ...opts, apiServer: opts.apiServer }, attempt, io, (api, explain) =>
      show({ source: modules.apiStatusSource(api, namespace, name), subject: RAYSERVICE_SUBJECT, namespace, name, opts, io, explain, stop }),
    );
  }
  const client = clientFor(opts, io);
  if (!client) return EXIT.invalid;
  const namespace = opts.namespace ?? client.namespace ?? 'default';
  const common = { namespace, name, opts, io, explain: (e: unknown) => (e as Error).message, stop };
  return rbg
    ? show({ ...common, source: kubeStatusSource(client, [RBG_V1ALPHA2_TYPE, RBG_V1ALPHA1_TYPE], namespace, name), subject: RBG_SUBJECT })
    : show({ ...common, source: kubeStatusSource(client, [RAYSHIFT_RAYSERVICE, KnownTypes.RayService], namespace, name), subject: ANY_RAYSERVICE_SUBJECT });
}

/** Prints the object of `run.source`, or with `--watch` follows it. */
async function show<V>(run: StatusRun<V>): Promise<number> {
  const { source, subject, opts, io } = run;
  try {
    const obj = await source.read();
    if (!obj) {
      io.err(`${io.errStyle.red('error:')} ${subject.what} ${run.namespace}/${run.name} not found\n`);
      return EXIT.invalid;
    }
    if (!opts.watch) {
      if (opts.json) io.out(`${JSON.stringify(subject.json(obj), null, 2)}\n`);
      else io.out(`${subject.screen(subject.view(obj), Date.now(), io.outStyle).join('\n')}\n`);
      return EXIT.ok;
    }
    return await follow(run, obj);
  } finally {
    source.close();
  }
}

async function follow<V>(run: StatusRun<V>, first: KubeObject): Promise<number> {
  const { source, subject, opts, io } = run;
  let view = subject.view(first);
  let drawn = 0;
  let lastKeys = new Set<string>();
  let ended = false;
  let resolveFinished!: (code: number) => void;
  const finished = new Promise<number>((resolve) => (resolveFinished = resolve));
  const finish = (code: number) => {
    ended = true;
    resolveFinished(code);
  };
  const draw = () => {
    if (io.interactive) {
      const lines = subject.screen(view, Date.now(), io.outStyle);
      // Move to the first line drawn last time and clear below it, then draw again.
      io.out(`${drawn > 0 ? `\u001b[${drawn}F\u001b[J` : ''}${lines.join('\n')}\n`);
      drawn = lines.length;
      return;
    }
    // A line per change: the lines without their time stamp say what changed.
    const lines = subject.lines(view, Date.now());
    const keys = new Set(lines.map(withoutTime));
    for (const l of lines) if (!lastKeys.has(withoutTime(l))) io.out(`${l}\n`);
    lastKeys = keys;
  };
  const settle = () => {
    if (!opts.untilDone) return;
    const f = subject.finished(view);
    if (!f.done) return;
    draw();
    if (f.failed) io.err(`${io.errStyle.red('did not complete:')} ${f.why ?? ''}\n`);
    finish(f.failed ? EXIT.invalid : EXIT.ok);
  };
  const stopFollowing = source.follow({
    changed(obj) {
      if (ended) return;
      view = subject.view(obj);
      if (!io.interactive) draw();
      settle();
    },
    deleted() {
      if (ended) return;
      io.err(`${subject.what} ${run.namespace}/${run.name} was deleted\n`);
      finish(EXIT.invalid);
    },
    failed(err) {
      if (ended) return;
      io.err(`${io.errStyle.red('error:')} ${run.explain(err)}\n`);
      finish(EXIT.invalid);
    },
  });
  draw();
  const timer = io.interactive ? setInterval(draw, REDRAW_MS) : undefined;
  void run.stop?.then(() => finish(EXIT.ok));
  try {
    return await finished;
  } finally {
    if (timer) clearInterval(timer);
    await stopFollowing();
  }
}

/** Prints `problem` as a usage error; returns the usage exit code (2). */
export function usageError(io: Output, problem: string): number {
  io.err(`${io.errStyle.red('error:')} ${problem}\n`);
  return EXIT.usage;
}

/**
 * Runs `call` with a client of the API server in `opts`; a failure (of `call`, or one `call` words
 * with `explain`) is printed as what it means for `attempt`, with exit code 1; a token that would
 * cross the network in cleartext is refused first (exit 2). Closes the client.
 */
export async function throughApi(
  modules: ApiModules,
  opts: ApiConnectionOptions & { readonly apiServer: string },
  attempt: ApiAttempt,
  io: Output,
  call: (api: ApiClient, explain: (err: unknown) => string) => Promise<number>,
): Promise<number> {
  let api: ApiClient | undefined;
  let tokenGiven = false;
  const explain = (e: unknown) => (e instanceof modules.ConnectError ? modules.describeApiError(e, attempt, { url: opts.apiServer, tokenGiven, caFile: opts.caFile }) : (e as Error).message);
  try {
    const token = resolveToken(opts);
    tokenGiven = token !== undefined;
    const notice = tokenGiven ? plaintextTokenNotice(opts) : {};
    if (notice.refusal) return usageError(io, notice.refusal);
    if (notice.warning) io.err(`${io.errStyle.yellow('warning:')} ${notice.warning}\n`);
    api = modules.connectApi(opts, token);
    return await call(api, explain);
  } catch (e) {
    io.err(`${io.errStyle.red('error:')} ${explain(e)}\n`);
    return EXIT.invalid;
  } finally {
    api?.close();
  }
}
