/**
 * Component args that may hold `pulumi.Input`s: which top-level props accept them, whether any
 * value given is still pending, and the args with every pending value resolved. Class instances
 * (a `RayClusterSpecBuilder`) pass through as they are: `pulumi.output` would copy them into plain
 * objects and lose their methods.
 */
import * as pulumi from '@pulumi/pulumi';

/** `T` with its props named in `K` accepting `pulumi.Input`s (optional props stay optional). */
export type WithInputs<T, K extends PropertyKey> = Omit<T, K> & { readonly [P in keyof Pick<T, Extract<K, keyof T>>]: pulumi.Input<T[P]> };

const isPending = (value: unknown): boolean => pulumi.Output.isInstance(value) || value instanceof Promise;

const isContainer = (value: unknown): value is Record<string, unknown> | unknown[] =>
  Array.isArray(value) || (typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype);

/** True when `value`, or a value in its plain objects and arrays, is an `Output` or a `Promise`. */
export function hasInputs(value: unknown): boolean {
  if (isPending(value)) return true;
  if (!isContainer(value)) return false;
  return (Array.isArray(value) ? value : Object.values(value)).some(hasInputs);
}

/**
 * An output of `value` (an `Output` or a `Promise`) that hands its value on as it is: `pulumi.output`
 * and `pulumi.all` copy values into plain objects, which would turn a builder made in an `apply`
 * into its fields.
 */
function asIs(value: unknown): pulumi.Output<unknown> {
  return pulumi.Output.isInstance(value) ? value : pulumi.output(0).apply(() => value as Promise<unknown>);
}

/** Records `value`'s pending values in `pending` and returns how to rebuild `value` from their resolved values. */
function rebuilder(value: unknown, pending: pulumi.Output<unknown>[]): (resolved: readonly unknown[]) => unknown {
  if (isPending(value)) {
    const at = pending.push(asIs(value)) - 1;
    return (resolved) => resolved[at];
  }
  if (Array.isArray(value)) {
    const items = value.map((v) => rebuilder(v, pending));
    return (resolved) => items.map((item) => item(resolved));
  }
  if (isContainer(value)) {
    const entries = Object.entries(value).map(([k, v]) => [k, rebuilder(v, pending)] as const);
    return (resolved) => Object.fromEntries(entries.map(([k, item]) => [k, item(resolved)]));
  }
  return () => value;
}

/**
 * `args` once every `Output` and `Promise` in it has resolved, as the plain props `P` they stand
 * for. The result depends on the resources those outputs came from (and is secret if one is), so
 * whatever is built from it waits for them.
 */
export function resolveInputs<P>(args: object): pulumi.Output<P> {
  const pending: pulumi.Output<unknown>[] = [];
  const rebuild = rebuilder(args, pending);
  // Chained `apply`s, not `pulumi.all`, which would copy the values (see `asIs`).
  const resolved = pending.reduce<pulumi.Output<unknown[]>>((all, next) => all.apply((values) => next.apply((value) => [...values, value])), pulumi.output(0).apply(() => []));
  return resolved.apply((values) => rebuild(values) as P);
}
