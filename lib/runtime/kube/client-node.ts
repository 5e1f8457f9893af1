/**
 * Loads `@kubernetes/client-node` (ESM-only from 1.0; 2.x, on undici 8, needs Node >= 22.19) from this
 * CommonJS package.
 *
 * Node 22.12+ can `require()` an ES module, but jest's module loader cannot (it parses the package's
 * `export` statements as CommonJS and fails), and jest also replaces `require('node:module')`'s
 * `createRequire` with its own loader. `process.getBuiltinModule('node:module')` returns Node's real
 * `module` builtin in both worlds, so `createRequire(__filename)` gives Node's own `require`, which loads
 * the ES module natively. Only the type-only import below reaches TypeScript; it is erased on output.
 */
import type * as ClientNode from '@kubernetes/client-node';

/** The `@kubernetes/client-node` module namespace. */
export type ClientNodeModule = typeof ClientNode;

let cached: ClientNodeModule | undefined;

/** Returns the `@kubernetes/client-node` module, loading it on first use with Node's own `require`. */
export function loadClientNode(): ClientNodeModule {
  if (cached) return cached;
  const nodeModule = (process.getBuiltinModule?.('node:module') ?? require('node:module')) as typeof import('node:module');
  const nodeRequire = nodeModule.createRequire(__filename);
  try {
    cached = nodeRequire('@kubernetes/client-node') as ClientNodeModule;
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    throw new Error(
      `cannot load @kubernetes/client-node (${err.code ?? 'error'}: ${err.message}); it is ESM-only and 2.x needs Node >= 22.19, ` +
        `which can require() ES modules; this is Node ${process.versions.node}`,
    );
  }
  return cached;
}
