import { App, Chart, ChartProps } from 'cdk8s';
import { Construct } from 'constructs';
import { RayClusterSpecBuilder, RayService } from '../lib';
import { OperatorChart } from '../operator/chart';

/**
 * A service for GitOps: `cdk8s synth` into a repository that Argo CD or Flux applies. The
 * rayshift operator (installed by `OperatorChart`) executes its incremental upgrades: traffic
 * moves 10% per minute through a shared Gateway, and an upgrade that makes no progress for
 * 15 minutes rolls back by itself. Every step after the first waits for Prometheus to show the new
 * cluster answering under 2% errors (Ray Serve's own metrics) and, through the gateway, no more
 * than 200 ms slower at p99 than the old one; a failed gate rolls the upgrade back. An upgrade whose
 * first GPU workers do not fit the nodes (or the namespace's GPU quota) is not started at all
 * (`capacityPolicy: fail`, docs/capacity.md): a person decides, instead of Pods sitting Pending;
 * one whose new Pods the scheduler still cannot place for 5 minutes is rolled back
 * (`surgeUnschedulableSeconds`).
 */
export class GitOpsServiceChart extends Chart {
  constructor(scope: Construct, id: string, props: ChartProps = {}) {
    super(scope, id, props);
    new RayService(this, 'chat', {
      metadata: { name: 'chat' },
      executor: 'operator',
      rayClusterConfig: new RayClusterSpecBuilder({
        image: 'rayproject/ray-llm:2.52.0-py311-cu128',
        head: { resources: { cpu: '4', memory: '16Gi' } },
        workerGroups: [{ groupName: 'gpu', minReplicas: 2, maxReplicas: 10, resources: { cpu: '8', memory: '64Gi', accelerators: 1 } }],
      }),
      serveConfig: { applications: [{ name: 'chat', importPath: 'ray.serve.llm:build_openai_app' }] },
      upgradeStrategy: {
        type: 'NewClusterWithIncrementalUpgrade',
        clusterUpgradeOptions: { maxSurgePercent: 20, stepSizePercent: 10, intervalSeconds: 60, gatewayClassName: 'traefik' },
      },
      rayshift: {
        gatewayRef: { name: 'inference', namespace: 'gateways' },
        progressDeadlineSeconds: 900,
        capacityPolicy: 'fail',
        surgeUnschedulableSeconds: 300,
        analysis: {
          prometheusUrl: 'http://prometheus-operated.monitoring:9090',
          metrics: [
            { name: 'error-ratio', template: 'ray-serve-error-ratio', successCondition: { maximum: 0.02 }, intervalSeconds: 20, count: 3, failureLimit: 1 },
            { name: 'p99-latency', template: 'traefik-latency-ms', quantile: 0.99, successCondition: { maxAboveActive: 200 }, intervalSeconds: 30, windowSeconds: 60 },
          ],
          onFailure: 'rollback',
        },
      },
    });
  }
}

/** Adds the operator's install chart (with the generated rayshift CRD) and the GitOps service to `app`. */
export function buildGitOpsExample(app: App): App {
  new OperatorChart(app, 'gitops-operator');
  new GitOpsServiceChart(app, 'gitops-service', { namespace: 'chat' });
  return app;
}
