/**
 * `rayshift operator` as a CLI subcommand. The CLI (lib/cli) never imports the operator: the
 * `rayshift` binary (bin/rayshift.js) hands this registrar to the CLI's `main`, so the layers stay
 * one-way (lib/ never imports operator/; see ARCHITECTURE.md).
 */
import type { Command } from 'commander';
import { PORT_RANGE, integerIn } from '../lib/cli/flag-parsers';
import { MAX_SHARDS } from '../lib/spec/sharding';
import type { RunOperatorOptions } from './run';

/** Services the operator reconciles at once: each holds open requests to the API server and a Ray head. */
const CONCURRENCY_RANGE = { min: 1, max: 1000 } as const;

/** Adds `rayshift operator` to `program`; its action loads the operator only when it runs. */
export function registerOperatorCommand(program: Command, exit: (code: number) => void): void {
  program
    .command('operator')
    .description('Run the rayshift operator, which executes upgrades of rayshift.dev RayServices')
    .option('--kubeconfig <path>', 'run outside the cluster with this kubeconfig (default: in-cluster ServiceAccount)')
    .option('--dashboard-address-template <url>', 'reach Ray dashboards at this URL template with {namespace} and {cluster} (default: <cluster>-head-svc.<namespace>.svc:8265)')
    .option('--http-port <port>', 'port of /healthz, /readyz and /metrics (default: $RAYSHIFT_HTTP_PORT or 8080)', integerIn('--http-port', PORT_RANGE))
    .option('--leader-elect', 'campaign for a Lease before reconciling (for more than one replica)')
    .option('--lease-namespace <ns>', 'namespace of the Lease (default: $POD_NAMESPACE)')
    .option('--shards <n>', `hash the services into n shards held by the replicas through one Lease each, so every replica works (default 1: leader election with --leader-elect)`, integerIn('--shards', { min: 1, max: MAX_SHARDS }))
    .option('--concurrency <n>', 'services reconciled at once (default 8)', integerIn('--concurrency', CONCURRENCY_RANGE))
    .option('--log-level <level>', 'pino log level', 'info')
    .action(async (opts: RunOperatorOptions) => {
      const { runOperator } = await import('./run');
      exit(await runOperator(opts));
    });
}
