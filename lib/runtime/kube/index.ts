/**
 * The Kubernetes client of rayshift's runtime: `KubeClient` (typed operations on any resource type,
 * server-side apply with field manager `rayshift`, status subresource, JSON patch, optimistic
 * concurrency), `Informer` (list+watch cache), `retryOnConflict` and condition helpers.
 */
export * from './client';
export * from './request-options';
export * from './conditions';
export * from './errors';
export * from './informer';
export * from './retry';
export * from './types';
export { KubeConfigTransport } from './transport';
export type { HttpRequest, HttpResponse, StreamHandle, Transport, KubeConfigTransportOptions } from './transport';
export { loadClientNode } from './client-node';
export type { ClientNodeModule } from './client-node';
export * from './object-reader';
