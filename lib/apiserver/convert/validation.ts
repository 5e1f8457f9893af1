/**
 * rayshift's own RayService checks (`lib/spec`) as INVALID_ARGUMENT with every violation, each
 * located by the request field it came from (`ray_service.spec.upgrade_strategy...`).
 */
import type { KubeObject } from '../../runtime/kube/types';
import { validateAsStored } from '../../spec/pinned-schemas';
import { validateRayService } from '../../spec/rayservice';
import type { JsonObject } from '../../spec/read';
import { invalidArgument } from '../errors';
import { TYPED_SPEC } from './rayservice';
import type { TypedShape } from './json-merge';

function snake(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

/**
 * The request field path of a `lib/spec` problem path, under the request field `prefix` that held the
 * RayService (`ray_service`) or its spec (`proposed`, with `specOnly`). Typed fields are renamed to
 * their proto names; paths inside a Struct keep the CRD spelling; untyped spec fields are under `overlay`.
 */
export function requestFieldPath(problemPath: string, prefix: string, specOnly = false): string {
  const [head, ...rest] = problemPath.split('.');
  if (head === 'metadata') return `${prefix}.${rest.join('.')}`;
  if (head !== 'spec') return `${prefix}.${problemPath}`;
  const out = specOnly ? [prefix] : [prefix, 'spec'];
  let shape: TypedShape | true = TYPED_SPEC;
  for (let i = 0; i < rest.length; i++) {
    const segment = rest[i];
    if (shape === true) return [...out, ...rest.slice(i)].join('.');
    const bare = segment.replace(/\[.*$/, '');
    const typed: TypedShape | true | undefined = shape[bare];
    if (typed === undefined) return [...out, 'overlay', ...rest.slice(i)].join('.');
    out.push(snake(segment));
    shape = typed;
  }
  return out.join('.');
}

/**
 * Fails with INVALID_ARGUMENT listing every error in `obj`: the pinned CRD's schema (a field the
 * API server would drop, a wrong type) and `validateRayService` on the defaulted object, as
 * `rayshift validate` checks a file.
 */
export function requireValidRayService(obj: KubeObject, prefix: string, specOnly = false): void {
  const { errors } = validateAsStored(obj as unknown as JsonObject, (stored) => validateRayService(stored));
  if (errors.length === 0) return;
  throw invalidArgument(
    `the RayService has ${errors.length} invalid field${errors.length === 1 ? '' : 's'}`,
    errors.map((p) => ({ field: requestFieldPath(p.path, prefix, specOnly), description: p.message })),
  );
}
