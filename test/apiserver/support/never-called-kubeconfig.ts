/** A kubeconfig for API servers under test whose Kubernetes cluster must never be called. */
import type { KubeConfig } from '@kubernetes/client-node';
import { loadClientNode } from '../../../lib/runtime/kube/client-node';

/**
 * A kubeconfig pointing at a closed local port with a dummy token: a test whose every answer
 * must come before any Kubernetes call (refusals, static files) fails loudly if one is made.
 */
export function neverCalledKubeConfig(): KubeConfig {
  const kc = new (loadClientNode().KubeConfig)();
  kc.loadFromOptions({
    clusters: [{ name: 'never-called', server: 'https://127.0.0.1:9' }],
    users: [{ name: 'nobody', token: 'unused' }],
    contexts: [{ name: 'c', cluster: 'never-called', user: 'nobody' }],
    currentContext: 'c',
  });
  return kc;
}
