/**
 * The `rayshift` command line. At start only `commander` and the CLI's light modules load (with
 * `yaml` for validate and plan); a subcommand that needs an optional peer dependency imports its
 * modules inside its action, after checking that the packages are installed (`peers.ts`).
 */
import { Command, CommanderError, Option } from 'commander';
import { RBG_RELEASES, type RbgRelease } from '../spec/rbg-releases';
import type { StatusOptions } from './status-command';
import type { SteerOptions } from './steer-command';
import type { DashboardOptions } from './dashboard-command';
import type { GetOptions } from './get-command';
import { addApiServerOptions } from './api-options';
import { registerApiServerCommand } from './api-server-command';
import { EXIT, Output, planCommand, validateCommand } from './commands';
import { integerIn } from './flag-parsers';
import { RBG_PLAN_MAX_ROUNDS } from '../spec/rbg-rules';
import { MissingPeerError, OPTIONAL_PEERS, checkPeers, isInstalled } from './peers';
import { styleFor } from './style';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { projectRoot } from '../runtime/package-root';

/** The version in the package's `package.json` (the nearest one above this module, in a checkout or in `node_modules/rayshift`). */
function packageVersion(): string {
  return (JSON.parse(fs.readFileSync(path.join(projectRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}

const NAMESPACE_HELP = "namespace (default: the kubeconfig context's; default with --api-server)";
const KUBECONFIG_HELP = 'kubeconfig file (default: $KUBECONFIG or ~/.kube/config)';
const CONTEXT_HELP = "kubeconfig context (default: the kubeconfig's current-context)";
const API_SERVER_HELP = '\nWith --api-server the call goes through the rayshift API server as the token\'s user (TokenReview, audience rayshift) instead of the Kubernetes API.\nExit status: 0 on success, 1 when the object is missing or the call fails (not authenticated, permission denied, not applicable now), 2 on a usage error.';

const FILES_HELP = 'YAML files, each with one or more documents; - reads standard input (named <stdin> in problems)';
const JSON_HELP = [
  'With --json the output is JSON on every outcome: a missing or unreadable file, a document that is',
  'not YAML and an unknown kind are entries in "problems", each naming its file. Usage errors (a',
  'missing argument, an unknown option) are still plain text on stderr, with exit status 2.',
].join('\n');
const PEERS_HELP = [
  '\nvalidate, plan and dashboard need no optional package. Optional peer dependencies (npm install NAME@RANGE):',
  `  status, get and the steering verbs: @kubernetes/client-node ${OPTIONAL_PEERS['@kubernetes/client-node']}; with --api-server instead`,
  '    @connectrpc/connect, @connectrpc/connect-node, @bufbuild/protobuf',
  `  api-server, operator: ${Object.entries(OPTIONAL_PEERS).map(([p, r]) => `${p} ${r}`).join(', ')}`,
].join('\n');
const EXIT_HELP = [
  `\nExit status of every command: ${EXIT.ok} on success, ${EXIT.invalid} when the input is invalid or the command fails, ${EXIT.usage} on a usage error`,
  "(an unknown command or option, a missing argument, flags that cannot work together); each command's --help says more.",
  'When the reader of standard output goes away (rayshift … | head -1), rayshift stops quietly: the exit status is',
  "the command's when it has decided (validate and plan decide before they print), 0 otherwise.",
].join('\n');

/** How `buildProgram` looks for optional peer dependencies (injectable for tests). */
export interface ProgramOptions {
  /** Whether a package is installed. @default resolves it from the CLI's modules */
  readonly installed?: (pkg: string) => boolean;
  /** Subcommands added by the binary that composes the CLI (`rayshift operator`, from operator/). @default none */
  readonly commands?: readonly CommandRegistrar[];
  /** The name usage and help show: `kubectl rayshift` when kubectl runs the CLI as its plugin. @default `rayshift` */
  readonly name?: string;
}

/** Adds a subcommand to the program; `exit` receives its exit code. */
export type CommandRegistrar = (program: Command, exit: (code: number) => void) => void;

/** `--rbg-version`: the RBG release RoleBasedGroups are checked for (its webhook's rules, its deprecations). */
function rbgVersionOption(): Option {
  return new Option('--rbg-version <release>', 'RBG release the RoleBasedGroups are for: adds its rules (v0.8: its webhook\'s) and deprecations').choices(RBG_RELEASES);
}

/**
 * Builds the program; `io` receives all output and `exit` the exit code (injectable for tests). A
 * subcommand whose optional peer dependencies are missing rejects `parseAsync` with a
 * `MissingPeerError` before it starts (`run` prints it).
 */
export function buildProgram(io: Output, exit: (code: number) => void, options: ProgramOptions = {}): Command {
  const program = new Command(options.name ?? 'rayshift')
    .description('Validate and plan stepwise upgrades of Ray Serve services and RoleBasedGroups on Kubernetes.')
    .version(packageVersion())
    .showHelpAfterError()
    .configureOutput({ writeOut: io.out, writeErr: io.err })
    .exitOverride()
    .addHelpText('after', `${PEERS_HELP}\n${EXIT_HELP}`)
    .hook('preAction', (_, command) => checkPeers(command.name(), command.opts(), options.installed ?? isInstalled));
  program
    .command('validate')
    .description('Validate every RayService, Gateway, route, RoleBasedGroup (with its rayshift.dev/coordination rules) and CoordinatedPolicy in YAML files')
    .argument('<file...>', FILES_HELP)
    .option('--json', 'print {"problems":[{file,document,kind,name,path,message,severity}]} instead of one line per problem')
    .addOption(rbgVersionOption())
    .addHelpText(
      'after',
      [
        "\nA file with no object rayshift validates is a warning; a mistyped kind or apiVersion in rayshift's",
        'API groups is an error. Each problem is one line on stdout, then the summary line ("valid: …" or',
        '"invalid: …", with the counts of errors, warnings and documents), also on stdout.',
        JSON_HELP,
        'Exit status: 0 when there are no errors (warnings allowed), 1 when there are, 2 on a usage error.',
      ].join('\n'),
    )
    .action((files: string[], opts: { json?: boolean; rbgVersion?: RbgRelease }) => exit(validateCommand(files, Boolean(opts.json), io, { rbgVersion: opts.rbgVersion })));
  program
    .command('plan')
    .description('Show the upgrade timeline of each RayService and the rounds of each RoleBasedGroup rollout (CoordinatedPolicy, inline or rayshift.dev/coordination rules)')
    .argument('<file...>', FILES_HELP)
    .option('--json', 'print {"plans":[…],"problems":[…]} instead of tables and charts')
    .addOption(rbgVersionOption())
    .option('--fail-at-round <n>', "RoleBasedGroups run by rayshift's executor: also show the rollback rounds after a gate failing at round n", integerIn('--fail-at-round', { min: 1, max: RBG_PLAN_MAX_ROUNDS }))
    .option('--cluster', "also show, per RayService, whether an upgrade started now fits the live cluster (Nodes, bound Pods, the namespace's ResourceQuotas and LimitRanges)")
    .option('-n, --namespace <ns>', "with --cluster: namespace of documents that name none (default: the kubeconfig context's)")
    .option('--kubeconfig <path>', `with --cluster: ${KUBECONFIG_HELP}`)
    .option('--context <name>', `with --cluster: ${CONTEXT_HELP}`)
    .addHelpText(
      'after',
      [
        '\nThe plan assumes every wait is satisfied at once: clusters ready, replicas up, routes programmed.',
        'The input is validated first. Its problems, warnings included, go to stderr as validate prints',
        'them, and so does the summary of invalid input ("invalid: …; no plan"), so that stdout holds the plan',
        'alone; with --json they are in "problems" (as validate --json lists them) next to "plans".',
        JSON_HELP,
        'With --cluster, each RayService also shows "capacity": fits, fits after the old cluster shrinks, or does not fit',
        '(with what it needs and what is free), as the operator\'s preflight would judge an upgrade started now.',
        'Exit status: 0 with a plan, 1 when the input is invalid (no plan; "plans" is empty) or --cluster cannot read the cluster, 2 on a usage error.',
      ].join('\n'),
    )
    .action(async (files: string[], opts: { json?: boolean; rbgVersion?: RbgRelease; failAtRound?: number; cluster?: boolean; namespace?: string; kubeconfig?: string; context?: string }) => {
      if (!opts.cluster) return exit(planCommand(files, Boolean(opts.json), io, { rbgVersion: opts.rbgVersion }, opts.failAtRound));
      const { planClusterCommand } = await import('./plan-cluster');
      exit(await planClusterCommand(files, Boolean(opts.json), io, opts, { rbgVersion: opts.rbgVersion }, opts.failAtRound));
    });
  addApiServerOptions(
    program
      .command('status')
      .description('Show where an upgrade stands: a rayshift.dev RayService (both weights, both target capacities, the next step) or, as rbg/NAME, a RoleBasedGroup rollout rayshift executes')
      .argument('<name>', 'RayService name, or rbg/NAME for a RoleBasedGroup')
      .option('-n, --namespace <ns>', NAMESPACE_HELP)
      .option('--kubeconfig <path>', KUBECONFIG_HELP)
      .option('--context <name>', CONTEXT_HELP)
      .option('-w, --watch', 'follow changes: redraw in place on a terminal, one line per change otherwise')
      .option('--until-done', 'with --watch: stop when no upgrade is in flight (exit 1 if it ended without the new spec serving)')
      .option('--json', 'print the status object as JSON'),
  )
    .addHelpText('after', API_SERVER_HELP)
    .action(async (name: string, opts: StatusOptions) => {
      const { statusCommand } = await import('./status-command');
      exit(await statusCommand(name, opts, io, interrupted()));
    });
  program
    .command('get')
    .description('List the rayshift.dev RayServices of a namespace with the split of each upgrade: both weights, both target capacities, the next step')
    .argument('<resource>', 'rayservices (or rayservice, rayservices.rayshift.dev)')
    .option('-n, --namespace <ns>', "namespace (default: the kubeconfig context's)")
    .option('-A, --all-namespaces', 'list every namespace (adds a NAMESPACE column)')
    .option('--kubeconfig <path>', KUBECONFIG_HELP)
    .option('--context <name>', CONTEXT_HELP)
    .addHelpText('after', '\nWEIGHTS and CAPACITIES are active/pending percentages (pending - when no upgrade is in flight).\nExit status: 0 with the table (or none found), 1 when the call fails, 2 on a usage error.')
    .action(async (resource: string, opts: GetOptions) => {
      const { getCommand } = await import('./get-command');
      exit(await getCommand(resource, opts, io));
    });
  program
    .command('dashboard')
    .description("Serve the live rollout dashboard (the package's dist-ui/), proxying a rayshift API server")
    .requiredOption('--api-server <url>', 'the rayshift API server, e.g. https://rayshift-api.rayshift-system:8443')
    .option('--listen <host:port>', 'address to serve on (default 127.0.0.1:8090)')
    .option('--ca-file <path>', "CA certificate (PEM) of the API server (default: the system's)")
    .option('--open', 'open the dashboard in the default browser')
    .action(async (opts: DashboardOptions) => {
      const { dashboardCommand } = await import('./dashboard-command');
      exit(await dashboardCommand(opts, io, interrupted()));
    });
  for (const [verb, what] of [
    ['pause', 'Hold the upgrade of a rayshift.dev RayService before its next step'],
    ['resume', 'Continue a paused upgrade'],
    ['promote', 'Finish the upgrade without waiting for the remaining intervals'],
    ['abort', 'Roll the upgrade back: traffic and capacity return to the active cluster'],
    ['rollback', "Set the spec back to the serving cluster's, which rolls the upgrade in flight back (needs --api-server); as rbg/NAME, return every coordinated role of a RoleBasedGroup rollout to the revision before it, in tandem"],
    ['retry-analysis', 'Measure the failed analysis run that paused the upgrade again from now'],
    ['skip-analysis', 'Count the failed analysis run that paused the upgrade as passed, so the upgrade goes on'],
  ] as const) {
    addApiServerOptions(
      program
        .command(verb)
        .description(what)
        .argument('<name>', verb === 'rollback' ? 'RayService name, or rbg/NAME for a RoleBasedGroup' : 'RayService name')
        .option('-n, --namespace <ns>', NAMESPACE_HELP)
        .option('--kubeconfig <path>', KUBECONFIG_HELP)
        .option('--context <name>', CONTEXT_HELP),
    )
      .addHelpText('after', API_SERVER_HELP)
      .action(async (name: string, opts: SteerOptions) => {
        const { steerCommand } = await import('./steer-command');
        exit(await steerCommand(verb, name, opts, io));
      });
  }
  registerApiServerCommand(program, exit);
  for (const register of options.commands ?? []) register(program, exit);
  return program;
}

/** Resolves on the first SIGINT or SIGTERM (ends a watch with exit 0). */
function interrupted(): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      process.off('SIGINT', done);
      process.off('SIGTERM', done);
      resolve();
    };
    process.once('SIGINT', done);
    process.once('SIGTERM', done);
  });
}

/** Runs the CLI with `argv` (without `node` and the script) and resolves to the exit code. */
export async function run(argv: readonly string[], io: Output, options: ProgramOptions = {}): Promise<number> {
  let code: number = EXIT.ok;
  const program = buildProgram(
    io,
    (c) => {
      code = c;
    },
    options,
  );
  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    if (err instanceof MissingPeerError) {
      io.err(`${io.errStyle.red('error:')} ${err.message}\n`);
      return EXIT.invalid;
    }
    throw err;
  }
  return code;
}

/**
 * Entry point of the `rayshift` binary: real stdout/stderr, exit code in `process.exitCode`;
 * `commands` are the subcommands the binary adds (bin/rayshift.js passes `rayshift operator`);
 * `name` is what usage shows (bin/kubectl-rayshift.js passes `kubectl rayshift`).
 */
export function main(commands: readonly CommandRegistrar[] = [], name?: string): void {
  const stdout = openUntilClosedPipe(process.stdout, () => {
    // The reader is gone (`rayshift … | head -1`): end as a Unix tool would on SIGPIPE, but quietly and
    // with the command's exit code when it has one (validate and plan decide before they print), else 0.
    // setImmediate lets the synchronous rest of the command finish and set process.exitCode first.
    setImmediate(() => process.exit());
  });
  const stderr = openUntilClosedPipe(process.stderr, () => {});
  const io: Output = {
    out: stdout,
    err: stderr,
    outStyle: styleFor(process.stdout),
    errStyle: styleFor(process.stderr),
    interactive: Boolean(process.stdout.isTTY),
  };
  run(process.argv.slice(2), io, { commands, ...(name !== undefined ? { name } : {}) }).then(
    (code) => {
      process.exitCode = code;
    },
    (err: Error) => {
      stderr(`${name ?? 'rayshift'}: ${err.message}\n`);
      process.exitCode = 1;
    },
  );
}

/**
 * A writer to `stream` that drops its text once the stream's reader has gone away (EPIPE), which
 * `onClosed` is told once; without it Node reports the closed pipe as an unhandled 'error' event
 * with a stack trace. Any other write error still ends the process as before.
 */
function openUntilClosedPipe(stream: NodeJS.WriteStream, onClosed: () => void): (text: string) => void {
  let open = true;
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    if (open) onClosed();
    open = false;
  });
  return (text) => {
    if (open) stream.write(text);
  };
}
