/**
 * KubeRay v1.7.0's Ray token-authentication rules (`authOptions` of a RayCluster spec), with the
 * same meaning as `ValidateRayClusterSpec` and `ValidateRayServiceSpec` (`controllers/ray/utils/
 * validation.go`), reported all at once instead of the first one:
 * - `mode` is `disabled` or `token` (the CRD's enum);
 * - `mode: token` needs `rayVersion` ≥ 2.52.0, parsed as `version.ParseGeneric` does;
 * - `enableK8sTokenAuth: true` needs `mode: token`, `rayVersion` ≥ 2.55.0 and no `secretName`;
 * - a RayService may not enable `enableK8sTokenAuth` at all.
 */
import { ProblemList, ValidationResult, show } from './problem';
import { asObject, isObject } from './read';

/** `spec.rayClusterConfig.authOptions` (`rayClusterSpec.authOptions`) of KubeRay v1.7.0. */
export interface RayAuthOptions {
  /** `token` turns Ray token authentication on; `disabled` (or unset) leaves it off. */
  readonly mode?: 'disabled' | 'token';
  /** Delegates token checks to the Kubernetes API server (Ray ≥ 2.55.0; not for RayServices). @default false */
  readonly enableK8sTokenAuth?: boolean;
  /** Secret holding the token under `auth_token`, instead of one KubeRay generates. */
  readonly secretName?: string;
}

/** Modes the KubeRay CRD allows. */
export const RAY_AUTH_MODES: readonly string[] = ['disabled', 'token'];
/** Oldest Ray with token authentication. */
export const MIN_RAY_VERSION_FOR_TOKEN_AUTH = '2.52.0';
/** Oldest Ray with Kubernetes-delegated token authentication. */
export const MIN_RAY_VERSION_FOR_K8S_TOKEN_AUTH = '2.55.0';

const GENERIC_VERSION = /^[\t\n\f\r ]*v?([0-9]+(?:\.[0-9]+)*)(.*)$/s;

/**
 * Parses a version as Kubernetes' `version.ParseGeneric` does: at least two numeric components,
 * no leading zero in the first, anything after them ignored (`2.52.0rc1` is 2.52.0). Returns the
 * components, or why it does not parse.
 */
export function parseGenericVersion(value: string): { components?: bigint[]; error?: string } {
  const m = GENERIC_VERSION.exec(value);
  if (!m) return { error: `could not parse ${show(value)} as version` };
  const parts = m[1].split('.');
  if (parts.length < 2) return { error: `illegal version string ${show(value)}` };
  if (parts[0].length > 1 && parts[0].startsWith('0')) return { error: `illegal zero-prefixed version component ${show(parts[0])} in ${show(value)}` };
  const components = parts.map((p) => BigInt(p));
  if (components.some((c) => c > 0xffff_ffff_ffff_ffffn)) return { error: `illegal version component out of range in ${show(value)}` };
  return { components };
}

/** `a < b` for generic versions (missing components count as 0). */
function lessThan(a: readonly bigint[], b: readonly bigint[]): boolean {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i] ?? 0n;
    const y = b[i] ?? 0n;
    if (x !== y) return x < y;
  }
  return false;
}

/**
 * Checks the token-authentication rules of a RayCluster spec; paths are relative to it
 * (`authOptions.mode`, `rayVersion`). `rayService` adds the RayService-only rule.
 */
export function validateRayAuth(cluster: unknown, rayService: boolean): ValidationResult {
  const problems = new ProblemList();
  const spec = asObject(cluster);
  if (spec.authOptions === undefined) return problems.result();
  if (!isObject(spec.authOptions)) {
    problems.error('authOptions', `must be a mapping with mode, enableK8sTokenAuth, secretName; got ${show(spec.authOptions)}`);
    return problems.result();
  }
  const auth = spec.authOptions;
  if (auth.mode !== undefined && (typeof auth.mode !== 'string' || !RAY_AUTH_MODES.includes(auth.mode))) {
    problems.error('authOptions.mode', `${show(auth.mode)} is not an authentication mode; allowed: ${RAY_AUTH_MODES.join(', ')}`);
  }
  if (auth.enableK8sTokenAuth !== undefined && typeof auth.enableK8sTokenAuth !== 'boolean') {
    problems.error('authOptions.enableK8sTokenAuth', `must be true or false; got ${show(auth.enableK8sTokenAuth)}`);
  }
  if (auth.secretName !== undefined && typeof auth.secretName !== 'string') {
    problems.error('authOptions.secretName', `must be a Secret name; got ${show(auth.secretName)}`);
  }
  const k8s = auth.enableK8sTokenAuth === true;
  if (k8s && rayService) {
    problems.error('authOptions.enableK8sTokenAuth', 'must not be true: Kubernetes token authentication is not supported for RayService (KubeRay v1.7.0); use mode "token" alone');
  }
  if (auth.mode !== 'token') {
    if (k8s) problems.error('authOptions.enableK8sTokenAuth', `is true but authOptions.mode is ${show(auth.mode)}; it needs mode "token"`);
    return problems.result();
  }
  const version = spec.rayVersion;
  const needed = k8s ? MIN_RAY_VERSION_FOR_K8S_TOKEN_AUTH : MIN_RAY_VERSION_FOR_TOKEN_AUTH;
  const why = k8s ? 'authOptions.enableK8sTokenAuth is true' : 'authOptions.mode is "token"';
  if (version === undefined || version === '') {
    problems.error('rayVersion', `is required when ${why}: Ray ${needed} or later; got ${show(version)}`);
  } else if (typeof version !== 'string') {
    problems.error('rayVersion', `must be a version string such as "${needed}"; got ${show(version)}`);
  } else {
    const parsed = parseGenericVersion(version);
    if (parsed.components === undefined) {
      problems.error('rayVersion', `${show(version)} is not a version (${parsed.error}); ${why}, which needs Ray ${needed} or later`);
    } else if (lessThan(parsed.components, parseGenericVersion(needed).components as bigint[])) {
      problems.error('rayVersion', `${show(version)} is too old: ${why}, which needs Ray ${needed} or later`);
    }
  }
  if (k8s && typeof auth.secretName === 'string' && auth.secretName !== '') {
    problems.error('authOptions.secretName', `must be unset when authOptions.enableK8sTokenAuth is true (the API server checks the tokens); got ${show(auth.secretName)}`);
  }
  return problems.result();
}
