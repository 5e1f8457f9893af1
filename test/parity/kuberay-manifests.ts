/**
 * The JSON forms of the Go fixtures KubeRay v1.7.0's `controllers/ray/utils/validation_test.go`
 * builds its cases from (`podTemplateSpec`, `createBasicRayClusterSpec`), and the validation case
 * type of the parity suite.
 */
import { SERVE_CONFIG } from '../spec/fixtures';
import type { UpstreamCase } from './ledger';

/** A Kubernetes EnvVar. */
export interface EnvVar {
  readonly name: string;
  readonly value?: string;
  readonly valueFrom?: unknown;
}

/** `env(name, value)`: one EnvVar. */
export function env(name: string, value?: string): EnvVar {
  return value === undefined ? { name } : { name, value };
}

/** KubeRay's `podTemplateSpec(envVars, restartPolicy)`: one unnamed container with `envVars`. */
export function pod(envVars?: readonly EnvVar[], restartPolicy?: string): any {
  const spec: Record<string, unknown> = { containers: [envVars === undefined ? {} : { env: envVars }] };
  if (restartPolicy !== undefined) spec.restartPolicy = restartPolicy;
  return { spec };
}

/** A pod template of the given containers (and volumes). */
export function podOf(containers: readonly object[], volumes?: readonly object[]): any {
  return { spec: volumes === undefined ? { containers } : { containers, volumes } };
}

/** KubeRay's `createBasicRayClusterSpec()` with `extra` fields merged in. */
export function cluster(extra: Record<string, unknown> = {}): any {
  return { headGroupSpec: { template: pod() }, ...extra };
}

/** A worker group; KubeRay's tests set `groupName`, `minReplicas` and `maxReplicas` only where given. */
export function worker(groupName: string | undefined, template: unknown, extra: Record<string, unknown> = {}): any {
  return { ...(groupName === undefined ? {} : { groupName }), template, ...extra };
}

/**
 * A RayService around `spec` (a `rayClusterConfig` and any other spec fields): named `svc`, with a
 * valid `serveConfigV2`, so that only what the case sets can be wrong.
 */
export function service(spec: Record<string, unknown>, metadata: Record<string, unknown> = {}): any {
  return { apiVersion: 'ray.io/v1', kind: 'RayService', metadata: { name: 'svc', ...metadata }, spec: { serveConfigV2: SERVE_CONFIG, ...spec } };
}

/** Where a validation case runs in rayshift. */
export type ValidationTarget =
  /** A RayService manifest, through `validateRayService` (KubeRay: `ValidateRayServiceMetadata`/`Spec`, `ValidateClusterUpgradeOptions`). */
  | { readonly service: unknown }
  /**
   * A RayCluster spec, through rayshift's cluster checks `validateRayClusterConfig` and
   * `validateRayAuth(spec, false)` (KubeRay: `ValidateRayClusterSpec`, `ValidateRayClusterUpgradeOptions`
   * and their helpers). `annotations` are the ones KubeRay's case passes; rayshift's checks read none.
   */
  | { readonly cluster: unknown; readonly annotations?: Readonly<Record<string, string>> };

/** One case of KubeRay's validation_test.go. */
export type ValidationCase = UpstreamCase &
  ValidationTarget & {
    /** KubeRay's outcome. */
    readonly upstream: 'accepted' | 'rejected';
    /** The field KubeRay's error names; rayshift must report an error at it (relative to the cluster spec for cluster cases). */
    readonly path?: string;
    /** Words rayshift's error at `path` must contain. */
    readonly words?: readonly string[];
  };
