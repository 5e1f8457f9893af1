/**
 * `rayshift operator`: runs the operator in a cluster (ServiceAccount) or outside one (kubeconfig).
 * Serves `/healthz`, `/readyz` and `/metrics` on one port, campaigns for leadership on a Lease when
 * asked (or, sharded, holds the Leases of its shards: operator/shards.ts), logs JSON lines (pino),
 * and on SIGTERM/SIGINT stops watching, lets reconciles in flight finish and releases its Leases.
 */
import * as http from 'node:http';
import * as os from 'node:os';
import pino from 'pino';
import { KubeClient } from '../lib/runtime/kube/client';
import { defaultDashboardResolver, templateDashboardResolver } from '../lib/runtime/serve/resolver';
import { LeaderElector } from '../lib/runtime/kube/leader-election';
import { OperatorMetrics } from './metrics';
import { RbgRolloutController } from './rbg-controller';
import { RbgRolloutMetrics } from '../lib/runtime/rbg/metrics';
import { Operator } from './operator';
import { OperatorShards } from './shards';
import { resolveSharding } from '../lib/spec/sharding';

/** Options of `rayshift operator` (flags, with environment fallbacks used by the install chart). */
export interface RunOperatorOptions {
  /** Kubeconfig path; unset: in-cluster ServiceAccount. */
  readonly kubeconfig?: string;
  /** Dashboard address template with `{namespace}` and `{cluster}`; unset: KubeRay's head Service DNS name. */
  readonly dashboardAddressTemplate?: string;
  /** Port of `/healthz`, `/readyz`, `/metrics`. @default $RAYSHIFT_HTTP_PORT or 8080 */
  readonly httpPort?: number;
  /** Campaign for a Lease before reconciling. @default false */
  readonly leaderElect?: boolean;
  /** Lease namespace. @default $POD_NAMESPACE or the kubeconfig namespace */
  readonly leaseNamespace?: string;
  /** Shards the services are hashed into; more than 1 shards the work across the replicas instead of electing a leader. @default 1 */
  readonly shards?: number;
  /** Services reconciled at once. @default 8 */
  readonly concurrency?: number;
  /** Log level. @default "info" */
  readonly logLevel?: string;
}

/** Runs until SIGTERM/SIGINT (or lost leadership); resolves with the exit code. */
export async function runOperator(opts: RunOperatorOptions): Promise<number> {
  const log = pino({ level: opts.logLevel ?? 'info', base: { component: 'rayshift-operator' } });
  const client = opts.kubeconfig ? KubeClient.fromKubeconfig(opts.kubeconfig) : KubeClient.inCluster();
  const metrics = new OperatorMetrics();
  const resolver = opts.dashboardAddressTemplate ? templateDashboardResolver(opts.dashboardAddressTemplate) : defaultDashboardResolver();
  const identity = process.env.POD_NAME ?? `${os.hostname()}-${process.pid}`;
  const leaseNamespace = opts.leaseNamespace ?? process.env.POD_NAMESPACE ?? client.namespace;
  const leaseName = process.env.RAYSHIFT_LEASE_NAME ?? 'rayshift-operator-leader';
  const shards = (opts.shards ?? 1) > 1 ? new OperatorShards(client, { namespace: leaseNamespace, prefix: leaseName, identity, sharding: resolveSharding({ shards: opts.shards }), log }) : undefined;
  const operator = new Operator({ client, resolver, log, metrics, concurrency: opts.concurrency, shards, identity });
  const rbg = new RbgRolloutController({ client, log, metrics: new RbgRolloutMetrics(metrics.registry, metrics.verdicts), concurrency: opts.concurrency, shards, identity });
  let ready = false;
  const server = http.createServer((req, res) => {
    if (req.url === '/healthz') res.writeHead(200).end('ok\n');
    else if (req.url === '/readyz') res.writeHead(ready && operator.ready() && rbg.ready() ? 200 : 503).end(ready ? 'ready\n' : 'starting\n');
    else if (req.url === '/metrics') {
      void metrics.registry.metrics().then((body) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(body));
    } else res.writeHead(404).end();
  });
  const port = opts.httpPort ?? Number(process.env.RAYSHIFT_HTTP_PORT ?? 8080);
  await new Promise<void>((resolve) => server.listen(port, resolve));
  log.info({ port, server: client.server }, 'health and metrics listening');

  let elector: LeaderElector | undefined;
  let finish!: (code: number) => void;
  const done = new Promise<number>((resolve) => (finish = resolve));
  const shutdown = async (code: number, why: string) => {
    log.info({ why }, 'shutting down');
    ready = false;
    await shards?.stop(); // drains and releases each shard while the controllers still run
    await operator.stop();
    await rbg.stop();
    await elector?.release();
    server.close();
    client.close();
    finish(code);
  };
  process.once('SIGTERM', () => void shutdown(0, 'SIGTERM'));
  process.once('SIGINT', () => void shutdown(0, 'SIGINT'));

  if (opts.leaderElect && !shards) {
    elector = new LeaderElector(client, { namespace: leaseNamespace, name: leaseName, identity });
    log.info({ identity }, 'campaigning for leadership');
    await elector.run(() => void shutdown(1, 'lost leadership'));
    log.info({ identity }, 'leading');
  }
  await operator.start();
  await rbg.start();
  if (shards) {
    log.info({ identity, shards: opts.shards }, 'holding shards');
    await shards.start([operator, rbg]);
  }
  ready = true;
  log.info({}, 'watches synced; reconciling');
  return done;
}
