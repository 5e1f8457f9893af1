/**
 * One model, no second rendering: a Pulumi component builds the very cdk8s construct of the same
 * name in a private in-memory chart, runs the construct's validation (the model's rules) and takes
 * the chart's JSON as the manifests of its `@pulumi/kubernetes` children.
 */
import * as pulumi from '@pulumi/pulumi';
import { App, Chart } from 'cdk8s';
import { Construct, Node } from 'constructs';

/** A Kubernetes manifest as cdk8s synthesizes it. */
export interface Manifest {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly [key: string]: unknown };
  readonly [field: string]: unknown;
}

/**
 * Builds `define`'s constructs in a fresh chart and returns the chart's manifests with the result
 * of `define`. Every validation error of every construct is collected first; if there is any, one
 * `pulumi.ResourceError` on `parent` lists them all, so `pulumi preview` fails naming each problem.
 */
export function synthesizeValidated<T extends Construct>(parent: pulumi.Resource, define: (chart: Chart) => T): { construct: T; manifests: Manifest[] } {
  const chart = new Chart(new App(), 'rayshift');
  const construct = define(chart);
  const problems = Node.of(chart)
    .findAll()
    .flatMap((c) => Node.of(c).validate());
  if (problems.length > 0) {
    throw new pulumi.ResourceError(`invalid rayshift resource (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n${problems.map((p) => `  - ${p}`).join('\n')}`, parent);
  }
  return { construct, manifests: chart.toJson() as Manifest[] };
}
