/**
 * Kubernetes clients that act as the caller: every request carries `Impersonate-User`, `-Uid`,
 * `-Group` and `-Extra-*` headers (a ServiceAccount: `Impersonate-User` only) built from the
 * TokenReview user (never from the caller's own request headers, so a forged `Impersonate-*` header
 * sent to rayshift has no effect). RBAC, admission and audit then apply to the caller, with rayshift
 * recorded as the impersonator.
 *
 * The headers are added by a view of the server's `KubeConfig` whose `applyToHTTPSOptions` appends
 * them after the server's own credentials; `KubeConfigTransport` copies those headers onto every
 * request. Clients are cached per identity for a short time, so one caller's requests share
 * keep-alive connections, and each runs a bounded number of requests at once. A client held by a
 * long call (a watch) is not closed as idle until every hold is released.
 */
import * as crypto from 'node:crypto';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '../../runtime/kube/client';
import { KubeConfigTransport } from '../../runtime/kube/transport';
import { LimitedTransport } from './limited-transport';
import type { Caller } from '../auth/caller';

const SERVICE_ACCOUNT_USER = /^system:serviceaccount:([^:]+):[^:]+$/;

/**
 * True when `caller` is a ServiceAccount whose groups are exactly those kube-apiserver gives a
 * ServiceAccount it impersonates by name (`system:serviceaccounts`, `system:serviceaccounts:<ns>`).
 */
function plainServiceAccount(caller: Caller): boolean {
  const namespace = SERVICE_ACCOUNT_USER.exec(caller.username)?.[1];
  if (namespace === undefined) return false;
  const groups = new Set(caller.groups.filter((g) => g !== 'system:authenticated'));
  return groups.size === 2 && groups.has('system:serviceaccounts') && groups.has(`system:serviceaccounts:${namespace}`);
}

/**
 * The impersonation headers of `caller` (repeated headers as arrays; extra keys percent-encoded). A
 * ServiceAccount is impersonated by its name alone: kube-apiserver then gives it the groups its
 * token has, RBAC needs only `impersonate` on `serviceaccounts`, and constrained impersonation
 * (whose ServiceAccount mode takes nothing but the name) works; its UID and token extras (credential
 * and pod binding) are not carried over.
 */
export function impersonationHeaders(caller: Caller): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = { 'Impersonate-User': caller.username };
  if (plainServiceAccount(caller)) return headers;
  if (caller.uid) headers['Impersonate-Uid'] = caller.uid;
  const groups = caller.groups.filter((g) => g !== 'system:authenticated');
  if (groups.length > 0) headers['Impersonate-Group'] = [...groups];
  for (const [key, values] of Object.entries(caller.extra)) {
    if (values.length > 0) headers[`Impersonate-Extra-${encodeURIComponent(key)}`] = [...values];
  }
  return headers;
}

/** A `KubeConfig` that authenticates as `base` does and then impersonates with `headers`. */
export function impersonatingKubeConfig(base: KubeConfig, headers: Record<string, string | string[]>): KubeConfig {
  const view = Object.create(base) as KubeConfig;
  view.applyToHTTPSOptions = async (opts) => {
    await base.applyToHTTPSOptions(opts);
    opts.headers = { ...(opts.headers ?? {}), ...headers };
  };
  return view;
}

/** Options of `ImpersonatingClients`. */
export interface ImpersonatingClientsOptions {
  /** How long an idle caller's client is kept, ms; default 60 000. */
  readonly idleMs?: number;
  /** Field manager of writes; default `rayshift-apiserver`. */
  readonly fieldManager?: string;
  /** Requests one caller's client runs at once (the rest queue); default 32. */
  readonly concurrency?: number;
}

/** One `KubeClient` per caller identity, made from the server's kubeconfig, closed when idle. */
export class ImpersonatingClients {
  readonly #clients = new Map<string, { client: KubeClient; timer: NodeJS.Timeout; holds: number }>();
  readonly #idleMs: number;
  readonly #fieldManager: string;
  readonly #concurrency: number;

  /** @param base the server's own kubeconfig (a user allowed to impersonate) */
  constructor(
    private readonly base: KubeConfig,
    opts: ImpersonatingClientsOptions = {},
  ) {
    this.#idleMs = opts.idleMs ?? 60_000;
    this.#fieldManager = opts.fieldManager ?? 'rayshift-apiserver';
    this.#concurrency = opts.concurrency ?? 32;
  }

  /** The client acting as `caller`. */
  for(caller: Caller): KubeClient {
    return this.#entry(caller).client;
  }

  /** Keeps the client of `caller` open until the returned function is called (once per hold). */
  hold(caller: Caller): () => void {
    const entry = this.#entry(caller);
    entry.holds++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      entry.holds--;
      entry.timer.refresh();
    };
  }

  #entry(caller: Caller): { client: KubeClient; timer: NodeJS.Timeout; holds: number } {
    const headers = impersonationHeaders(caller);
    const key = crypto.createHash('sha256').update(JSON.stringify(headers)).digest('hex');
    const existing = this.#clients.get(key);
    if (existing) {
      existing.timer.refresh();
      return existing;
    }
    const transport = new LimitedTransport(new KubeConfigTransport(impersonatingKubeConfig(this.base, headers)), this.#concurrency);
    const client = new KubeClient(transport, { fieldManager: this.#fieldManager });
    const timer = setTimeout(() => {
      // Held: look again after another idle period.
      if (entry.holds > 0) return void timer.refresh();
      this.#clients.delete(key);
      client.close();
    }, this.#idleMs);
    timer.unref();
    const entry = { client, timer, holds: 0 };
    this.#clients.set(key, entry);
    return entry;
  }

  /** Closes every cached client. */
  close(): void {
    for (const { client, timer } of this.#clients.values()) {
      clearTimeout(timer);
      client.close();
    }
    this.#clients.clear();
  }
}
