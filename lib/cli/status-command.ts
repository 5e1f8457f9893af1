/**
 * `rayshift status NAME` and the steering verbs (`pause`, `resume`, `promote`, `abort`) for
 * `rayshift.dev` RayServices, over a kubeconfig. `--watch` follows the service through its watch:
 * on a terminal the screen is redrawn in place (with a live countdown), otherwise one line is
 * printed per change, which is what a CI log wants.
 */
import { KubeClient } from '../runtime/kube/client';
import { KubeObject } from '../runtime/kube/types';
import { ABORT_ANNOTATION, PAUSE_ANNOTATION, PROMOTE_ANNOTATION, RAYSHIFT_RAYSERVICE } from '../runtime/rayservice/names';
import { EXIT, Output } from './commands';
import { ServiceView, lineKey, renderServiceLine, renderServiceScreen, serviceView } from './status-view';

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

/** `rayshift status NAME`; resolves to the exit code. `stop` ends a watch (SIGINT in the binary). */
export async function statusCommand(name: string, opts: StatusOptions, io: Output, stop?: Promise<void>): Promise<number> {
  const client = clientFor(opts);
  const namespace = opts.namespace ?? client.namespace ?? 'default';
  try {
    const obj = await client.tryGet(RAYSHIFT_RAYSERVICE, name, namespace);
    if (!obj) {
      io.err(`${io.errStyle.red('error:')} RayService ${namespace}/${name} (rayshift.dev/v1alpha1) not found\n`);
      return EXIT.invalid;
    }
    if (!opts.watch) {
      if (opts.json) io.out(`${JSON.stringify(obj.status ?? {}, null, 2)}\n`);
      else io.out(`${renderServiceScreen(serviceView(obj), Date.now(), io.outStyle).join('\n')}\n`);
      return EXIT.ok;
    }
    return await watchService(client, namespace, name, obj, opts, io, stop);
  } finally {
    client.close();
  }
}

async function watchService(client: KubeClient, namespace: string, name: string, first: KubeObject, opts: StatusOptions, io: Output, stop?: Promise<void>): Promise<number> {
  let view = serviceView(first);
  let drawn = 0;
  let lastKey = '';
  let finish!: (code: number) => void;
  const finished = new Promise<number>((resolve) => (finish = resolve));
  const draw = () => {
    if (io.interactive) {
      const lines = renderServiceScreen(view, Date.now(), io.outStyle);
      // Move to the first line drawn last time and clear below it, then draw again.
      io.out(`${drawn > 0 ? `\u001b[${drawn}F\u001b[J` : ''}${lines.join('\n')}\n`);
      drawn = lines.length;
    } else {
      const key = lineKey(view);
      if (key !== lastKey) io.out(`${renderServiceLine(view, Date.now())}\n`);
      lastKey = key;
    }
  };
  const settle = () => {
    if (!opts.untilDone || !upgradeDone(view)) return;
    draw();
    const failed = FAILED_REASONS.has(String(view.engine?.reason));
    if (failed) io.err(`${io.errStyle.red('upgrade did not complete:')} ${view.engine?.reason}\n`);
    finish(failed ? EXIT.invalid : EXIT.ok);
  };
  const informer = client.watch(RAYSHIFT_RAYSERVICE, namespace, (e) => {
    if (e.object.metadata.name !== name) return;
    if (e.type === 'delete') {
      io.err(`RayService ${namespace}/${name} was deleted\n`);
      finish(EXIT.invalid);
      return;
    }
    view = serviceView(e.object);
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
