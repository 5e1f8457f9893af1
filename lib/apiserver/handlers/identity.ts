/** `WhoAmI`: the caller as TokenReview authenticated them. */
import type { ServiceImpl } from '@connectrpc/connect';
import { scopeOf } from '../auth/request-scope';
import type { IdentityService } from '../gen/rayshift/v1/identity_pb';

/** The identity handlers. */
export function identity(): ServiceImpl<typeof IdentityService> {
  return {
    whoAmI(_req, ctx) {
      const { caller } = scopeOf(ctx);
      return {
        username: caller.username,
        uid: caller.uid ?? '',
        groups: [...caller.groups],
        extra: Object.entries(caller.extra).map(([key, values]) => ({ key, values: [...values] })),
      };
    },
  };
}
