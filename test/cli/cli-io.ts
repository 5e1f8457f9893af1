/** Runs the CLI in this process with captured output, plain styles and an injected standard input. */
import * as path from 'node:path';
import { run, type ProgramOptions } from '../../lib/cli/main';
import type { Output } from '../../lib/cli/commands';
import { registerOperatorCommand } from '../../operator/command';
import type { Style } from '../../lib/cli/style';

/** Styles that leave text as it is. */
export const plain: Style = { red: (s) => s, yellow: (s) => s, green: (s) => s, dim: (s) => s, bold: (s) => s };

/** What one run printed and its exit code. */
export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `rayshift ...argv` (composed as bin/rayshift.js composes it) with `stdin` as standard input (reading it fails when not given). */
export async function rayshiftIn(argv: readonly string[], opts: { stdin?: string } & ProgramOptions = {}): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const io: Output = {
    out: (t) => (stdout += t),
    err: (t) => (stderr += t),
    outStyle: plain,
    errStyle: plain,
    stdin: () => {
      if (opts.stdin === undefined) throw new Error('no standard input in this test');
      return opts.stdin;
    },
  };
  const code = await run(argv, io, { installed: opts.installed, commands: [registerOperatorCommand] });
  return { code, stdout, stderr };
}

/** The absolute path of the fixture `name`, as problems name it. */
export const fixture = (name: string) => path.join(__dirname, 'fixtures', name);
