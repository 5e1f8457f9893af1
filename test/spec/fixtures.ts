/** Shared manifests and assertions of the model tests: valid baselines that each test breaks in one place. */
import { Problem, ValidationResult } from '../../lib/spec';

/** A deep copy, so a test can break one field of a baseline without touching the others. */
export function clone<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** A worker pod template asking for `gpus` NVIDIA GPUs (none when 0). */
export function podTemplate(gpus = 0): any {
  const limits: Record<string, string> = { cpu: '4', memory: '16Gi' };
  if (gpus > 0) limits['nvidia.com/gpu'] = String(gpus);
  return { spec: { containers: [{ name: 'ray', image: 'rayproject/ray:2.52.0', resources: { limits, requests: limits } }] } };
}

export const SERVE_CONFIG = [
  'applications:',
  '  - name: llm',
  '    import_path: ray.serve.llm:build_openai_app',
  '    route_prefix: /',
  '',
].join('\n');

/**
 * A valid incremental `ray.io/v1` RayService: autoscaler on, CPU-only workers (so no accelerator
 * warning), surge 20, step 5, interval 60, class "istio". It validates with no errors and no warnings.
 */
export function rayService(): any {
  return {
    apiVersion: 'ray.io/v1',
    kind: 'RayService',
    metadata: { name: 'llm', namespace: 'serving' },
    spec: {
      rayClusterConfig: {
        rayVersion: '2.52.0',
        enableInTreeAutoscaling: true,
        headGroupSpec: { rayStartParams: { 'num-cpus': '0' }, template: podTemplate(0) },
        workerGroupSpecs: [{ groupName: 'cpu', replicas: 1, minReplicas: 1, maxReplicas: 4, template: podTemplate(0) }],
      },
      serveConfigV2: SERVE_CONFIG,
      upgradeStrategy: {
        type: 'NewClusterWithIncrementalUpgrade',
        clusterUpgradeOptions: { maxSurgePercent: 20, stepSizePercent: 5, intervalSeconds: 60, gatewayClassName: 'istio' },
      },
      rayClusterDeletionDelaySeconds: 60,
    },
  };
}

/** The same service executed by the rayshift operator, with every extension set. */
export function rayshiftService(): any {
  const m = rayService();
  m.apiVersion = 'rayshift.dev/v1alpha1';
  m.spec.rayshift = {
    gatewayRef: { name: 'shared', namespace: 'gateways', sectionName: 'http' },
    progressDeadlineSeconds: 600,
    paused: false,
    routeKind: 'HTTP',
  };
  return m;
}

/** Paths of the errors of a result. */
export function errorPaths(result: ValidationResult): string[] {
  return result.errors.map((e) => e.path);
}

/** The findings (errors or warnings) at exactly `path`. */
export function at(problems: readonly Problem[], path: string): Problem[] {
  return problems.filter((p) => p.path === path);
}

/**
 * Asserts that the result has exactly one error, at `path`, whose message contains every word, and
 * returns it. Used after breaking one field of a valid baseline, so any other error is a regression.
 */
export function expectOnlyError(result: ValidationResult, path: string, ...words: string[]): Problem {
  expect(errorPaths(result)).toEqual([path]);
  const [error] = result.errors;
  expect(error.severity).toBe('error');
  for (const w of words) expect(error.message).toContain(w);
  return error;
}

/** Asserts that some error is at `path` and its message contains every word (other errors may exist). */
export function expectErrorAt(result: ValidationResult, path: string, ...words: string[]): Problem {
  const found = at(result.errors, path);
  expect(found.map((p) => p.path)).toContain(path);
  const match = found.find((p) => words.every((w) => p.message.includes(w)));
  if (!match) throw new Error(`no error at ${path} contains ${JSON.stringify(words)}; got ${JSON.stringify(found.map((p) => p.message))}`);
  return match;
}

/** Asserts a clean result: no errors and no warnings. */
export function expectClean(result: ValidationResult): void {
  expect(result.errors).toEqual([]);
  expect(result.warnings).toEqual([]);
}
