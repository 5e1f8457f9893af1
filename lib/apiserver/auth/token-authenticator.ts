/**
 * Bearer-token authentication through the Kubernetes TokenReview API with an audience: whatever
 * authenticators the cluster has (ServiceAccount tokens, OIDC, webhooks, static tokens) decide, and
 * rayshift never parses tokens itself. Answers are cached for a few seconds by the token's SHA-256,
 * and concurrent calls with the same token share one review. Refused tokens drain a per-address
 * budget: once it is spent, tokens this server has never accepted get RESOURCE_EXHAUSTED from that
 * address without a review. A token it has accepted is remembered (by hash, longer than the cache)
 * and reviewed again whenever its cached answer expires, whatever its address's budget: garbage sent
 * from an address (one client behind a NAT or an ingress) cannot lock out the callers who share it.
 */
import * as crypto from 'node:crypto';
import { Code, ConnectError } from '@connectrpc/connect';
import type { KubeClient } from '../../runtime/kube/client';
import type { Caller } from './caller';
import { ExpiringCache } from './expiring-cache';
import { FailureLimiter, type FailureLimiterOptions } from './failure-limiter';

/** The audience callers' tokens must be issued for. */
export const DEFAULT_AUDIENCE = 'rayshift';

/** Options of `TokenAuthenticator`. */
export interface TokenAuthenticatorOptions {
  /** Audience to require; default `rayshift`. */
  readonly audience?: string;
  /** How long an answer (accepted or refused) is reused, ms; default 10 000. */
  readonly cacheTtlMs?: number;
  /** Budget of refused tokens per client address; default 20, then 1 a second. */
  readonly failures?: Omit<FailureLimiterOptions, 'now'>;
  /** Accepted tokens remembered as accepted (by hash; the least recently accepted is forgotten first); default 10 000. */
  readonly maxAcceptedTokens?: number;
  /** The clock of the cache, the budgets and the accepted tokens (epoch ms); default `Date.now`. */
  readonly now?: () => number;
}

/**
 * How long a token once accepted is exempt from its address's budget, ms: a day, longer than any
 * token for audience `rayshift` is commonly issued for (`kubectl create token` gives 1 hour, at most
 * 48); it only decides whether the token is reviewed, never whether it is accepted.
 */
const ACCEPTED_TOKEN_MS = 24 * 60 * 60 * 1000;

interface TokenReviewStatus {
  readonly authenticated?: boolean;
  readonly audiences?: readonly string[];
  readonly user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
}

/** Turns an `Authorization` header into a `Caller`, or fails with UNAUTHENTICATED. */
export class TokenAuthenticator {
  readonly #audience: string;
  readonly #cache: ExpiringCache<Caller | null>;
  readonly #inFlight = new Map<string, Promise<Caller | null>>();
  readonly #failures: FailureLimiter;
  /** Hashes of tokens TokenReview accepted: their reviews never wait for an address's budget. */
  readonly #accepted: ExpiringCache<true>;

  /** @param reviewer a client with the right to create TokenReviews (`system:auth-delegator`) */
  constructor(
    private readonly reviewer: KubeClient,
    opts: TokenAuthenticatorOptions = {},
  ) {
    this.#audience = opts.audience ?? DEFAULT_AUDIENCE;
    const now = opts.now ?? Date.now;
    this.#cache = new ExpiringCache(opts.cacheTtlMs ?? 10_000, undefined, now);
    this.#failures = new FailureLimiter({ ...opts.failures, now });
    this.#accepted = new ExpiringCache(ACCEPTED_TOKEN_MS, opts.maxAcceptedTokens, now);
  }

  /** The caller that `authorization` (the header's value) authenticates; `clientAddress` is whose budget a refusal spends. */
  async authenticate(authorization: string | null | undefined, clientAddress?: string): Promise<Caller> {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    if (!match) throw new ConnectError('a bearer token is required (Authorization: Bearer <token>)', Code.Unauthenticated);
    const key = crypto.createHash('sha256').update(match[1]).digest('hex');
    let caller = this.#cache.get(key);
    if (caller === undefined) {
      let review = this.#inFlight.get(key);
      if (!review) {
        const known = this.#accepted.get(key) !== undefined;
        if (!known && clientAddress !== undefined && !this.#failures.allows(clientAddress)) {
          throw new ConnectError('too many refused tokens from this address; try again in a few seconds', Code.ResourceExhausted);
        }
        review = this.#review(match[1]).then((c) => {
          this.#cache.set(key, c);
          if (c !== null) this.#accepted.set(key, true);
          else {
            // A token refused now (expired, revoked) loses its exemption; its refusal is charged to its address.
            this.#accepted.delete(key);
            if (clientAddress !== undefined) this.#failures.fail(clientAddress);
          }
          return c;
        });
        this.#inFlight.set(key, review);
        void review.finally(() => this.#inFlight.delete(key)).catch(() => undefined);
      }
      caller = await review;
    }
    if (caller === null) throw new ConnectError(`the token is not valid for audience ${this.#audience}`, Code.Unauthenticated);
    return caller;
  }

  async #review(token: string): Promise<Caller | null> {
    let status: TokenReviewStatus | undefined;
    try {
      const review = await this.reviewer.request<{ status?: TokenReviewStatus }>('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token, audiences: [this.#audience] } },
      });
      status = review.status;
    } catch {
      throw new ConnectError('authentication is unavailable', Code.Unavailable);
    }
    const user = status?.user;
    if (!status?.authenticated || !user?.username || !(status.audiences ?? []).includes(this.#audience)) return null;
    return { username: user.username, ...(user.uid ? { uid: user.uid } : {}), groups: user.groups ?? [], extra: user.extra ?? {} };
  }
}
