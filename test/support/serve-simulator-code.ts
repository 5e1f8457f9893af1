/**
 * The application code the TEST-ONLY Serve simulator (serve-simulator.ts) can import: no Python
 * runs, so an import path maps to the deployments its `build` function would declare.
 */

/** One deployment as the simulated application code declares it (`@serve.deployment(...)`). */
export interface SimulatedDeploymentCode {
  /** Deployment name. */
  readonly name: string;
  /** Code default for `num_replicas` (1 when neither this nor `autoscaling_config` is set). */
  readonly num_replicas?: number | 'auto';
  /** Code default for `autoscaling_config`. */
  readonly autoscaling_config?: { readonly min_replicas?: number; readonly max_replicas?: number; readonly initial_replicas?: number };
}

/** What an import path builds. */
export interface SimulatedApplicationCode {
  /** The deployments of the application graph. */
  readonly deployments: readonly SimulatedDeploymentCode[];
}

/** The test apps of ray-local.md §3, importable by default. */
export const SIMULATED_DEFAULT_CODE: { readonly [importPath: string]: SimulatedApplicationCode } = {
  'rayshift_testapp.app:build': { deployments: [{ name: 'Version' }] },
  'rayshift_testapp.grpc_app:build': { deployments: [{ name: 'Echo' }] },
};
