/**
 * The Prometheus HTTP API client of analysis: one instant query (`POST /api/v1/query`) at the
 * address the user configured (`analysis.prometheusUrl`), never anywhere else (no redirect is
 * followed), bounded by a timeout. Every way a query can fail to give one number is an error
 * whose message says which; the engine counts such a measurement as inconclusive.
 */
import { BoundedAnswer, BoundedRequestError, boundedRequest } from '../net/bounded-request';
import { isObject } from '../../spec/read';

/** A query failed to give one number: Prometheus unreachable, slow, answering an error, or a result that is not one sample. */
export class PrometheusQueryError extends Error {
  override readonly name = 'PrometheusQueryError';
}

const MAX_BODY_BYTES = 8 * 1024 * 1024;

/**
 * The value of `query` now: a number (NaN and ±Inf included, as Prometheus gives them), or
 * `undefined` when the result is empty (no series matched). Throws `PrometheusQueryError`.
 */
export async function queryPrometheus(prometheusUrl: string, query: string, timeoutMs: number): Promise<number | undefined> {
  const base = prometheusUrl.endsWith('/') ? prometheusUrl : `${prometheusUrl}/`;
  const url = new URL('api/v1/query', base);
  const body = new URLSearchParams({ query }).toString();
  const answer = await post(url, body, timeoutMs);
  return singleNumber(answer.status, answer.text);
}

/** The number in a `/api/v1/query` answer (see `queryPrometheus`). */
export function singleNumber(status: number, text: string): number | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new PrometheusQueryError(`Prometheus answered HTTP ${status} with a body that is not JSON: ${text.slice(0, 120)}`);
  }
  if (!isObject(doc) || doc.status !== 'success') {
    const d = isObject(doc) ? doc : {};
    throw new PrometheusQueryError(`Prometheus answered HTTP ${status}: ${String(d.errorType ?? 'error')}: ${String(d.error ?? 'no error message')}`);
  }
  const data = isObject(doc.data) ? doc.data : {};
  const result = data.result;
  if (data.resultType === 'scalar' && Array.isArray(result)) return sampleValue(result);
  if (data.resultType !== 'vector' || !Array.isArray(result)) {
    throw new PrometheusQueryError(`the query gave a ${String(data.resultType)}; it must give a scalar or a vector of one series`);
  }
  if (result.length === 0) return undefined;
  if (result.length > 1) {
    throw new PrometheusQueryError(`the query gave ${result.length} series; it must give one (aggregate it, e.g. with sum(...))`);
  }
  const only = result[0];
  return sampleValue(isObject(only) ? only.value : undefined);
}

function sampleValue(sample: unknown): number {
  const v = Array.isArray(sample) ? sample[1] : undefined;
  if (typeof v !== 'string') throw new PrometheusQueryError(`the result's sample has no value: ${JSON.stringify(sample)}`);
  // Prometheus writes infinities as "+Inf" / "-Inf", which Number() does not read.
  if (v === '+Inf' || v === 'Inf') return Infinity;
  if (v === '-Inf') return -Infinity;
  return Number(v);
}

async function post(url: URL, body: string, timeoutMs: number): Promise<{ status: number; text: string }> {
  const headers = { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body), accept: 'application/json', 'user-agent': 'rayshift-analysis' };
  let answer: BoundedAnswer;
  try {
    answer = await boundedRequest(url, { method: 'POST', headers, body, timeoutMs, maxBodyBytes: MAX_BODY_BYTES });
  } catch (err) {
    const e = err as BoundedRequestError;
    throw new PrometheusQueryError(`Prometheus at ${url.origin}: ${e.kind === 'timeout' ? `no answer within ${timeoutMs} ms` : e.message}`);
  }
  if (answer.status >= 300 && answer.status < 400) {
    throw new PrometheusQueryError(`Prometheus at ${url.origin}: answered a redirect (HTTP ${answer.status}), which is not followed; configure the final address`);
  }
  return { status: answer.status, text: answer.body };
}
