/** `pulumi up` in the background of a run under load (scenario.ts `runUnderLoad`): started as the run's change, awaited as its end. */
import type { Stack } from '@pulumi/pulumi/automation';

/** How one `pulumi up` ended: its result and the stack output `active`, or the error. */
export interface UpOutcome {
  readonly ok: boolean;
  readonly result?: string;
  readonly active?: string;
  readonly error?: string;
}

/** A `pulumi up` of `stack` whose CLI output goes to `output` (emptied when it starts). */
export interface BackgroundUp {
  /** Starts it (returns at once: `runUnderLoad`'s `change`). */
  start(): Promise<void>;
  /** True once it ended; throws with the CLI output when it failed (`runUnderLoad`'s `done`). */
  done(): Promise<boolean>;
  /** Waits for its end. */
  outcome(): Promise<UpOutcome | undefined>;
}

/** See `BackgroundUp`. */
export function backgroundUp(stack: Stack, output: string[]): BackgroundUp {
  let finished: UpOutcome | undefined;
  let up: Promise<void> = Promise.resolve();
  return {
    async start() {
      output.length = 0;
      up = stack.up({ onOutput: (line) => void output.push(line) }).then(
        (r) => {
          finished = { ok: r.summary.result === 'succeeded', result: r.summary.result, active: r.outputs.active?.value as string };
        },
        (err: Error) => {
          finished = { ok: false, error: err.message };
        },
      );
    },
    async done() {
      if (finished && !finished.ok) throw new Error(`pulumi up failed: ${finished.error ?? finished.result}\n${output.join('')}`);
      return finished !== undefined;
    },
    async outcome() {
      await up;
      return finished;
    },
  };
}
