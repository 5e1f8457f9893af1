/**
 * The two ways a request gets its scope: the secure one (TokenReview, impersonation and
 * SubjectAccessReview) and `--insecure-local`, where every request acts as the server's own
 * kubeconfig user (the server then listens on loopback only).
 */
import type { KubeClient } from '../../runtime/kube/client';
import { ImpersonatingClients } from '../kube/impersonation';
import { AccessReviewer } from './access-reviewer';
import type { Caller } from './caller';
import { RequestScope, ScopeResolver } from './request-scope';
import { TokenAuthenticator } from './token-authenticator';

/** Bearer token → TokenReview → a scope that impersonates the caller. */
export class ImpersonatingScopeResolver implements ScopeResolver {
  constructor(
    private readonly authenticator: TokenAuthenticator,
    private readonly clients: ImpersonatingClients,
    private readonly reviewer: AccessReviewer,
  ) {}

  async resolve(authorization: string | null, clientAddress?: string): Promise<RequestScope> {
    const caller = await this.authenticator.authenticate(authorization, clientAddress);
    return {
      caller,
      kube: this.clients.for(caller),
      authorize: (attributes) => this.reviewer.require(caller, attributes),
      allows: (attributes) => this.reviewer.allows(caller, attributes),
      revalidate: async () => {
        await this.authenticator.authenticate(authorization);
      },
      keepAlive: () => this.clients.hold(caller),
    };
  }
}

/** The development user of `--insecure-local`. */
export const LOCAL_CALLER: Caller = { username: 'rayshift:insecure-local', groups: [], extra: {} };

/** Every request acts as the server's own identity, unauthenticated (`--insecure-local` only). */
export class LocalScopeResolver implements ScopeResolver {
  constructor(private readonly server: KubeClient) {}

  async resolve(): Promise<RequestScope> {
    // The server's own client lives as long as the server: nothing to keep alive.
    return { caller: LOCAL_CALLER, kube: this.server, authorize: async () => undefined, allows: async () => true, revalidate: async () => undefined, keepAlive: () => () => undefined };
  }
}
