/**
 * A check at start-up that the `rayshift` audience is a dedicated one. A cluster that adds it to
 * kube-apiserver's `--api-audiences` gives it to every token minted without an explicit audience
 * (every Pod's default ServiceAccount token, `kubectl create token` without `--audience`), so every
 * such token is accepted here and every token sent here is accepted by kube-apiserver. The server's
 * own credential, when it is a bearer token, is usually one of those: if TokenReview accepts it for
 * the audience, the audiences overlap, and the server says so in its log. It costs one TokenReview
 * and never reads the token.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { TokenAuthenticator } from './token-authenticator';

/**
 * Logs a warning when the bearer token of `kubeConfig` (the server's own identity) is accepted for
 * `audience`; a client certificate, a refused token or a TokenReview that fails says nothing.
 */
export async function warnOnSharedAudience(kubeConfig: KubeConfig, authenticator: TokenAuthenticator, audience: string, log: Logger): Promise<void> {
  const options: { headers?: Record<string, unknown> } = { headers: {} };
  try {
    await kubeConfig.applyToHTTPSOptions(options as never);
  } catch {
    return;
  }
  const authorization = options.headers?.Authorization ?? options.headers?.authorization;
  if (typeof authorization !== 'string' || !/^Bearer\s/i.test(authorization)) return;
  try {
    await authenticator.authenticate(authorization);
  } catch {
    return;
  }
  log.warn(
    { audience },
    `this server's own token is accepted for audience ${audience}: kube-apiserver's --api-audiences (or an audience-agnostic authenticator) makes tokens it accepts ${audience} tokens too, ` +
      `so every Pod's default ServiceAccount token is a ${audience} token and every token sent here is valid against kube-apiserver; keep ${audience} out of --api-audiences or pass --audience a name of its own (docs/api-server.md)`,
  );
}
