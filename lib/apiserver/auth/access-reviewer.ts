/**
 * SubjectAccessReview checks for the steering verbs, which RBAC grants as virtual subresources of
 * `rayshift.dev` RayServices (`rayservices/pause`, `rayservices/promote`, ... with verb `update`), so
 * that a role may promote without being allowed to edit. Answers are cached for a few seconds.
 */
import * as crypto from 'node:crypto';
import { Code, ConnectError } from '@connectrpc/connect';
import type { KubeClient } from '../../runtime/kube/client';
import type { Caller } from './caller';
import { ExpiringCache } from './expiring-cache';

/** What the caller wants to do, in RBAC terms. */
export interface ResourceAttributes {
  /** API group, e.g. `rayshift.dev`. */
  readonly group: string;
  /** Resource (plural), e.g. `rayservices`. */
  readonly resource: string;
  /** Subresource, e.g. `promote` (virtual subresources are fine: RBAC matches names). */
  readonly subresource?: string;
  /** Verb, e.g. `update`. */
  readonly verb: string;
  readonly namespace: string;
  readonly name?: string;
}

/** Asks the API server whether a caller may do something. */
export class AccessReviewer {
  readonly #cache: ExpiringCache<boolean>;

  /** @param reviewer a client with the right to create SubjectAccessReviews (`system:auth-delegator`) */
  constructor(
    private readonly reviewer: KubeClient,
    cacheTtlMs = 5_000,
  ) {
    this.#cache = new ExpiringCache(cacheTtlMs);
  }

  /** Whether `caller` may act on `attributes`; UNAVAILABLE when the review cannot be made. */
  async allows(caller: Caller, attributes: ResourceAttributes): Promise<boolean> {
    const key = crypto.createHash('sha256').update(JSON.stringify([caller, attributes])).digest('hex');
    let allowed = this.#cache.get(key);
    if (allowed === undefined) {
      allowed = await this.#review(caller, attributes);
      this.#cache.set(key, allowed);
    }
    return allowed;
  }

  /** Fails with PERMISSION_DENIED unless `caller` may act on `attributes`. */
  async require(caller: Caller, attributes: ResourceAttributes): Promise<void> {
    if (!(await this.allows(caller, attributes))) {
      const what = `${attributes.resource}${attributes.subresource ? `/${attributes.subresource}` : ''}`;
      throw new ConnectError(`${caller.username} may not ${attributes.verb} ${what} in namespace ${attributes.namespace}`, Code.PermissionDenied);
    }
  }

  async #review(caller: Caller, attributes: ResourceAttributes): Promise<boolean> {
    try {
      const review = await this.reviewer.request<{ status?: { allowed?: boolean } }>('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: { user: caller.username, uid: caller.uid, groups: caller.groups, extra: caller.extra, resourceAttributes: attributes },
        },
      });
      return review.status?.allowed === true;
    } catch {
      throw new ConnectError('authorization is unavailable', Code.Unavailable);
    }
  }
}
