/**
 * Built-in analysis queries people can use unchanged, and the one function that turns a metric
 * into the PromQL sent for one cluster. Each template measures one RayCluster (`{{cluster}}`):
 *
 * - from Ray Serve's own metrics (the HTTP proxy of every node exports them on Ray's metrics port;
 *   the scrape must put the RayCluster's name in a label, `ray_io_cluster` as KubeRay's PodMonitor
 *   does, or `clusterLabel`);
 * - from the gateway's metrics, per backend: the backend of a cluster is its Service
 *   `<cluster>-serve-svc`. Traefik names its services after the Kubernetes Service
 *   (`traefik_service_*{service=~".*<cluster>-serve-svc.*"}`); Envoy-based gateways (Istio, Envoy
 *   Gateway with one cluster per backend) name their upstream clusters after it
 *   (`envoy_cluster_*{envoy_cluster_name=~".*<cluster>-serve-svc.*"}`).
 *
 * An error ratio's numerator falls back to 0 (`or vector(0)`): a backend that never failed has no
 * 5xx series at all, and without it the ratio would be an empty result (inconclusive) exactly
 * when the version is healthy. A window without requests still gives NaN (0/0) or no series,
 * which makes the measurement inconclusive.
 */
/** A built-in analysis query. */
export type AnalysisTemplateName =
  /** Share of the cluster's Serve HTTP requests answered with an error (5xx), 0–1. */
  | 'ray-serve-error-ratio'
  /** The cluster's Serve HTTP latency quantile (`quantile`), in milliseconds. */
  | 'ray-serve-latency-ms'
  /** Share of the cluster's requests through Traefik answered 5xx, 0–1. */
  | 'traefik-error-ratio'
  /** The cluster's latency quantile through Traefik, in milliseconds. */
  | 'traefik-latency-ms'
  /** Share of the cluster's requests through an Envoy-based gateway answered 5xx, 0–1. */
  | 'envoy-error-ratio'
  /** The cluster's latency quantile through an Envoy-based gateway, in milliseconds. */
  | 'envoy-latency-ms';

/** Every template name. */
export const ANALYSIS_TEMPLATE_NAMES: readonly AnalysisTemplateName[] = [
  'ray-serve-error-ratio',
  'ray-serve-latency-ms',
  'traefik-error-ratio',
  'traefik-latency-ms',
  'envoy-error-ratio',
  'envoy-latency-ms',
];

/** The PromQL of each template, with `{{placeholders}}`; `{{selector}}` selects the cluster's series, `{{quantile}}` is the metric's quantile. */
export const ANALYSIS_TEMPLATES: Readonly<Record<AnalysisTemplateName, string>> = {
  'ray-serve-error-ratio':
    '(sum(rate(ray_serve_num_http_error_requests_total{{{selector}},error_code=~"5.."}[{{window}}])) or vector(0)) / sum(rate(ray_serve_num_http_requests_total{{{selector}}}[{{window}}]))',
  'ray-serve-latency-ms':
    'histogram_quantile({{quantile}}, sum by (le) (rate(ray_serve_http_request_latency_ms_bucket{{{selector}}}[{{window}}])))',
  'traefik-error-ratio':
    '(sum(rate(traefik_service_requests_total{{{selector}},code=~"5.."}[{{window}}])) or vector(0)) / sum(rate(traefik_service_requests_total{{{selector}}}[{{window}}]))',
  'traefik-latency-ms':
    '1000 * histogram_quantile({{quantile}}, sum by (le) (rate(traefik_service_request_duration_seconds_bucket{{{selector}}}[{{window}}])))',
  'envoy-error-ratio':
    '(sum(rate(envoy_cluster_upstream_rq_xx{{{selector}},envoy_response_code_class="5"}[{{window}}])) or vector(0)) / sum(rate(envoy_cluster_upstream_rq_xx{{{selector}}}[{{window}}]))',
  'envoy-latency-ms':
    'histogram_quantile({{quantile}}, sum by (le) (rate(envoy_cluster_upstream_rq_time_bucket{{{selector}}}[{{window}}])))',
};

/** What a query is rendered for. */
export interface AnalysisQueryContext {
  /** The RayService's namespace. */
  readonly namespace: string;
  /** The RayService's name. */
  readonly service: string;
  /** The RayCluster measured. */
  readonly cluster: string;
  /** Its route backend, the Service `<cluster>-serve-svc` (`perClusterServeService`), for the gateway templates. */
  readonly backendService: string;
  /** The window in seconds. */
  readonly windowSeconds: number;
  /** The Prometheus label carrying the RayCluster name (Ray Serve templates). */
  readonly clusterLabel: string;
}

/** What of a metric decides its query. */
export interface AnalysisQuerySource {
  readonly query?: string;
  readonly template?: AnalysisTemplateName;
  readonly quantile?: number;
}

/** The PromQL of `metric` for one cluster: its query or template with every placeholder filled in. */
export function renderAnalysisQuery(metric: AnalysisQuerySource, ctx: AnalysisQueryContext): string {
  const text = metric.template !== undefined ? ANALYSIS_TEMPLATES[metric.template] : metric.query ?? '';
  const values: Record<string, string> = {
    namespace: ctx.namespace,
    service: ctx.service,
    cluster: ctx.cluster,
    window: `${ctx.windowSeconds}s`,
    quantile: String(metric.quantile ?? 0.99),
    selector: metric.template === undefined ? '' : templateSelector(metric.template, ctx),
  };
  return text.replace(/\{\{\s*([a-zA-Z]+)\s*\}\}/g, (whole, name: string) => values[name] ?? whole);
}

function templateSelector(template: AnalysisTemplateName, ctx: AnalysisQueryContext): string {
  // Cluster names are DNS labels: nothing in them needs escaping in a regular expression.
  const backend = `.*${ctx.backendService}.*`;
  if (template.startsWith('traefik-')) return `service=~"${backend}"`;
  if (template.startsWith('envoy-')) return `envoy_cluster_name=~"${backend}"`;
  return `${ctx.clusterLabel}="${ctx.cluster}"`;
}
