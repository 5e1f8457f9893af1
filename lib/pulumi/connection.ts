/** How the dynamic providers reach the cluster and the Ray dashboards (runtime side: loaded inside provider methods). */
import { loadClientNode } from '../runtime/kube/client-node';
import { KubeClient } from '../runtime/kube/client';
import { ServeDashboardClient } from '../runtime/serve/client';
import { defaultDashboardResolver, templateDashboardResolver } from '../runtime/serve/resolver';
import type { ProviderSettings } from './provider-module';

/** Field manager of the Pulumi executor's writes. */
export const PULUMI_FIELD_MANAGER = 'rayshift-pulumi';

/** Where a dynamic provider connects. */
export interface ConnectionSettings {
  /** Kubeconfig text; unset: `$KUBECONFIG`, `~/.kube/config` or the in-cluster ServiceAccount. */
  readonly kubeconfig?: string;
  /** Kubeconfig context. @default the current context */
  readonly context?: string;
  /** Dashboard address template with `{namespace}` and `{cluster}`. @default KubeRay's in-cluster head Service */
  readonly dashboardAddressTemplate?: string;
}

/** The connection of a resource: its inputs first, else the provider's configuration (the stack's), else the default kubeconfig lookup. */
export function connectionOf(config: ProviderSettings, inputs: ConnectionSettings): ConnectionSettings {
  return {
    kubeconfig: inputs.kubeconfig ?? config.kubeconfig,
    context: inputs.context ?? config.context,
    dashboardAddressTemplate: inputs.dashboardAddressTemplate,
  };
}

/** `<namespace>/<name>`, the id of every rayshift dynamic resource. */
export function resourceId(inputs: { readonly namespace: string; readonly name: string }): string {
  return `${inputs.namespace}/${inputs.name}`;
}

/** A Kubernetes client for the settings; close it when done. */
export function connectKube(settings: ConnectionSettings): KubeClient {
  const options = { fieldManager: PULUMI_FIELD_MANAGER, ...(settings.context ? { context: settings.context } : {}) };
  if (!settings.kubeconfig) return KubeClient.fromDefault(options);
  const { KubeConfig } = loadClientNode();
  const kc = new KubeConfig();
  kc.loadFromString(settings.kubeconfig);
  return KubeClient.fromKubeConfig(kc, options);
}

/** A Ray dashboard client for the settings. */
export function connectServe(settings: ConnectionSettings): ServeDashboardClient {
  return new ServeDashboardClient({
    resolver: settings.dashboardAddressTemplate ? templateDashboardResolver(settings.dashboardAddressTemplate) : defaultDashboardResolver(),
  });
}

/** Runs `use` with a Kubernetes client for the settings and closes the client afterwards. */
export async function withKubeClient<T>(settings: ConnectionSettings, use: (client: KubeClient) => Promise<T>): Promise<T> {
  const client = connectKube(settings);
  try {
    return await use(client);
  } finally {
    client.close();
  }
}

/** True when any of `keys` differs between old outputs and new inputs (as JSON); `diff` of every rayshift dynamic resource. */
export function inputsChanged<I>(olds: unknown, news: I, keys: readonly (keyof I)[]): boolean {
  const before = olds as Partial<I>;
  return keys.some((k) => JSON.stringify(before[k]) !== JSON.stringify(news[k]));
}
