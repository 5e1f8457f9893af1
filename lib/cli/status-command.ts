/**
 * `rayshift status NAME` (a `rayshift.dev` RayService, or `rbg/NAME` for a RoleBasedGroup whose
 * rollout rayshift executes) and the steering verbs (`pause`, `resume`, `promote`, `abort`) for
 * RayServices, over a kubeconfig. `--watch` follows the service through its watch:
 * on a terminal the screen is redrawn in place (with a live countdown), otherwise one line is
 * printed per change, which is what a CI log wants.
 */
import { KubeClient } from '../runtime/kube/client';
import { KubeObject, ResourceType } from '../runtime/kube/types';
import { RBG_V1ALPHA1_TYPE, RBG_V1ALPHA2_TYPE } from '../runtime/rbg/names';
import { ABORT_ANNOTATION, PAUSE_ANNOTATION, PROMOTE_ANNOTATION, RAYSHIFT_RAYSERVICE } from '../runtime/rayservice/names';
import { EXIT, Output } from './commands';
import { GroupView, groupView, renderGroupLines, renderGroupScreen, rolloutFinished } from './rbg-status-view';
import { ServiceView, renderServiceLine, renderServiceScreen, serviceView, withoutTime } from './status-view';
import { Style } from './style';

/** Options of `rayshift status`. */
export interface StatusOptions {
  /** kubeconfig file. @default $KUBECONFIG or ~/.kube/config */
  readonly kubeconfig?: string;
  /** Namespace. @default the kubeconfig context's, else `default` */
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
/** Reasons that end an upgrade without the new spec serving. */
const FAILED_REASONS = new Set(['Aborted', 'ProgressDeadlineExceeded', 'RollbackComplete', 'UpgradeCancelled']);

function clientFor(opts: { kubeconfig?: string }): KubeClient {
  return opts.kubeconfig ? KubeClient.fromKubeconfig(opts.kubeconfig) : KubeClient.fromDefault();
}

/** True once the service's current spec has been observed and no upgrade is in flight. */
export function upgradeDone(v: ServiceView): boolean {
  const e = v.engine;
  return e !== undefined && e.pendingClusterName === undefined && e.phase === 'Running' && (v.generation === undefined || v.observedGeneration === v.generation);
}

/** How `status` reads, renders and judges one kind of object. */
interface Subject<V> {
  readonly what: string;
  view(obj: KubeObject): V;
  screen(v: V, now: number, style: Style): string[];
  lines(v: V, now: number): string[];
  /** Finished (for `--until-done`), and whether it finished without the new version. */
  finished(v: V): { done: boolean; failed: boolean; why?: string };
}

const RAYSERVICE_SUBJECT: Subject<ServiceView> = {
  what: 'RayService (rayshift.dev/v1alpha1)',
  view: serviceView,
  screen: renderServiceScreen,
  lines: (v, now) => [renderServiceLine(v, now)],
  finished: (v) => {
    const done = upgradeDone(v);
    const failed = done && FAILED_REASONS.has(String(v.engine?.reason));
    return { done, failed, why: v.engine?.reason };
  },
};

const RBG_SUBJECT: Subject<GroupView> = {
  what: 'RoleBasedGroup (workloads.x-k8s.io)',
  view: groupView,
  screen: renderGroupScreen,
  lines: renderGroupLines,
  finished: (v) => ({ ...rolloutFinished(v), why: v.coordinations.filter((c) => c.phase !== 'Complete').map((c) => `${c.name}: ${c.reason}`).join(', ') }),
};

/** `rbg/NAME` or `rolebasedgroup/NAME` names a RoleBasedGroup; anything else a RayService. */
function parseTarget(target: string): { rbg: boolean; name: string } {
  const m = /^(rbg|rolebasedgroups?)\/(.+)$/i.exec(target);
  return m ? { rbg: true, name: m[2] } : { rbg: false, name: target.replace(/^(rayservices?(\.rayshift\.dev)?)\//i, '') };
}

/**
 * `rayshift status TARGET` (a RayService name, or `rbg/NAME` for a RoleBasedGroup); resolves to
 * the exit code. `stop` ends a watch (SIGINT in the binary).
 */
export async function statusCommand(target: string, opts: StatusOptions, io: Output, stop?: Promise<void>): Promise<number> {
  const client = clientFor(opts);
  const namespace = opts.namespace ?? client.namespace ?? 'default';
  const { rbg, name } = parseTarget(target);
  try {
    let type: ResourceType = RAYSHIFT_RAYSERVICE;
    let obj: KubeObject | undefined;
    for (const t of rbg ? [RBG_V1ALPHA2_TYPE, RBG_V1ALPHA1_TYPE] : [RAYSHIFT_RAYSERVICE]) {
      obj = await client.tryGet(t, name, namespace);
      type = t;
      if (obj) break;
    }
    const subject = (rbg ? RBG_SUBJECT : RAYSERVICE_SUBJECT) as Subject<unknown>;
    if (!obj) {
      io.err(`${io.errStyle.red('error:')} ${subject.what} ${namespace}/${name} not found\n`);
      return EXIT.invalid;
    }
    if (!opts.watch) {
      if (opts.json) io.out(`${JSON.stringify(rbg ? groupView(obj) : obj.status ?? {}, null, 2)}\n`);
      else io.out(`${subject.screen(subject.view(obj), Date.now(), io.outStyle).join('\n')}\n`);
      return EXIT.ok;
    }
    return await watchObject(client, type, namespace, name, obj, subject, opts, io, stop);
  } finally {
    client.close();
  }
}

async function watchObject<V>(client: KubeClient, type: ResourceType, namespace: string, name: string, first: KubeObject, subject: Subject<V>, opts: StatusOptions, io: Output, stop?: Promise<void>): Promise<number> {
  let view = subject.view(first);
  let drawn = 0;
  let lastKeys = new Set<string>();
  let finish!: (code: number) => void;
  const finished = new Promise<number>((resolve) => (finish = resolve));
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
  const informer = client.watch(type, namespace, (e) => {
    if (e.object.metadata.name !== name) return;
    if (e.type === 'delete') {
      io.err(`${subject.what} ${namespace}/${name} was deleted\n`);
      finish(EXIT.invalid);
      return;
    }
    view = subject.view(e.object);
    if (!io.interactive) draw();
    settle();
  }, { resyncIntervalMs: 0 });
  informer.start();
  draw();
  const timer = io.interactive ? setInterval(draw, REDRAW_MS) : undefined;
  void stop?.then(() => finish(EXIT.ok));
  try {
    return await finished;
  } finally {
    if (timer) clearInterval(timer);
    await informer.stop();
  }
}

/** The steering verbs and the annotation each sets (`resume` removes the pause). */
export const STEERING = {
  pause: { annotation: PAUSE_ANNOTATION, value: 'true', says: 'paused: no further step until resumed' },
  resume: { annotation: PAUSE_ANNOTATION, value: null, says: 'resumed (spec.rayshift.paused, if set, still holds it)' },
  promote: { annotation: PROMOTE_ANNOTATION, value: 'true', says: 'promoting: the upgrade finishes without waiting for intervals' },
  abort: { annotation: ABORT_ANNOTATION, value: 'true', says: 'aborting: traffic and capacity return to the active cluster' },
} as const;

/** A steering verb. */
export type SteeringVerb = keyof typeof STEERING;

/** `rayshift pause|resume|promote|abort NAME`: sets (or removes) the verb's annotation. */
export async function steerCommand(verb: SteeringVerb, name: string, opts: { kubeconfig?: string; namespace?: string }, io: Output): Promise<number> {
  const client = clientFor(opts);
  const namespace = opts.namespace ?? client.namespace ?? 'default';
  const s = STEERING[verb];
  try {
    if (!(await client.tryGet(RAYSHIFT_RAYSERVICE, name, namespace))) {
      io.err(`${io.errStyle.red('error:')} RayService ${namespace}/${name} (rayshift.dev/v1alpha1) not found\n`);
      return EXIT.invalid;
    }
    await client.patchMerge(RAYSHIFT_RAYSERVICE, name, namespace, { metadata: { annotations: { [s.annotation]: s.value } } });
    io.out(`RayService ${namespace}/${name} ${s.says}\n`);
    return EXIT.ok;
  } finally {
    client.close();
  }
}
