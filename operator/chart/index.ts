/**
 * `rayshift/operator`: the rayshift operator's install chart, for GitOps repositories.
 *
 * `OperatorChart` synthesizes the `rayservices.rayshift.dev` CRD, the operator's Namespace,
 * ServiceAccount, least-privilege RBAC and Deployment, and optionally the core API server. The CRD
 * ships with the package, generated ahead of time from the newest supported KubeRay
 * (`RAYSHIFT_CRD_KUBERAY_VERSION`), so synthesis reads no file and needs no network.
 *
 * @example
 * ```ts
 * import { App } from 'cdk8s';
 * import { OperatorChart } from 'rayshift/operator';
 *
 * const app = new App({ outdir: 'clusters/prod/rayshift' });
 * new OperatorChart(app, 'rayshift-operator', { image: 'registry.example/rayshift:0.1.0' });
 * app.synth();
 * ```
 *
 * @packageDocumentation
 */
export { OPERATOR_NAME, OPERATOR_NAMESPACE, OperatorChart, RayshiftCrd } from './operator-chart';
export type { OperatorChartProps } from './operator-chart';
export type { ApiServerProps, ImpersonationMode } from './api-server';
export { synthOperatorChart } from './main';
export { RAYSHIFT_CRD_KUBERAY_VERSION, generatedRayshiftRayServiceCrd } from '../../lib/crds/generated-crd';
