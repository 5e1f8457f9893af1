/** rayshift: typed infrastructure-as-code for serving models on Ray and RoleBasedGroup. */
export * from './spec';
export * from './cdk8s';
export * from './crds/catalog';
export * from './crds/rayshift-crd';
export * from './engine';
export * from './engine/from-spec';
export * as kube from './runtime/kube';
export * as serve from './runtime/serve';
export * as route from './runtime/route';
export { RayServiceReconciler } from './runtime/rayservice/reconciler';
export { rayshiftServiceStore } from './runtime/rayservice/store';
export type { RayServiceStore } from './runtime/rayservice/store';
export type { RayServiceReconcilerOptions, ReconcileResult, ReconcileLogger } from './runtime/rayservice/reconciler';
export { WorkQueue } from './runtime/work-queue';
export * as rbg from './runtime/rbg';
export * as api from './apiserver';
