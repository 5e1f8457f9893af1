/**
 * KubeRay v1.7.0's token-authentication and initializing-timeout rules beyond the cases of its
 * `controllers/ray/utils/validation_test.go` (those run in test/parity/kuberay-validation.test.ts):
 * version syntax, the branches no Go case covers, every problem at once, Go duration syntax.
 */
import {
  INITIALIZING_TIMEOUT_ANNOTATION,
  Problem,
  initializingTimeoutProblem,
  parseGoDuration,
  validateRayAuth,
  validateRayService,
} from '../../lib/spec';
import { expectClean, expectErrorAt, expectOnlyError, podTemplate, rayService } from './fixtures';

/** A RayCluster spec as KubeRay's tests build it: one head container, the given version and auth. */
function clusterSpec(rayVersion: string, authOptions: object): any {
  return { rayVersion, headGroupSpec: { template: podTemplate(0) }, authOptions };
}

function messages(problems: readonly Problem[]): string[] {
  return problems.map((p) => `${p.path}: ${p.message}`);
}

describe('authOptions.mode token: rayVersion', () => {
  test('versions parse as version.ParseGeneric does: a suffix is ignored, one component or a leading zero is not a version', () => {
    expectClean(validateRayAuth(clusterSpec('2.52.0rc1', { mode: 'token' }), false));
    expectClean(validateRayAuth(clusterSpec('v2.53', { mode: 'token' }), false));
    expectOnlyError(validateRayAuth(clusterSpec('2', { mode: 'token' }), false), 'rayVersion', 'illegal version string');
    expectOnlyError(validateRayAuth(clusterSpec('02.52.0', { mode: 'token' }), false), 'rayVersion', 'zero-prefixed');
    expectOnlyError(validateRayAuth(clusterSpec('2.51.99', { mode: 'token' }), false), 'rayVersion', 'too old');
  });
});

// ValidateRayClusterSpec's else branch ("authOptions.enableK8sTokenAuth is enabled but authOptions.mode
// not set to 'token'") and the CRD's enum on mode; no Go test case covers them.
describe('authOptions outside token mode', () => {
  test.each([undefined, 'disabled'])('enableK8sTokenAuth with mode %p is rejected', (mode) => {
    const r = validateRayAuth(clusterSpec('2.55.0', { mode, enableK8sTokenAuth: true }), false);
    expectOnlyError(r, 'authOptions.enableK8sTokenAuth', 'needs mode "token"', `mode is ${mode === undefined ? 'unset' : '"disabled"'}`);
  });

  test('mode disabled needs no version; an unknown mode is rejected with the allowed values', () => {
    expectClean(validateRayAuth(clusterSpec('', { mode: 'disabled' }), false));
    expectOnlyError(validateRayAuth(clusterSpec('2.52.0', { mode: 'Token' }), false), 'authOptions.mode', '"Token"', 'allowed: disabled, token');
  });
});

// The auth rules reached through the RayService validator.
describe('authOptions in a RayService', () => {
  test('token mode on a RayService is checked with every other problem at once', () => {
    const m = rayService();
    m.spec.rayClusterConfig.rayVersion = '2.50.0';
    m.spec.rayClusterConfig.authOptions = { mode: 'token', enableK8sTokenAuth: true, secretName: 's' };
    const r = validateRayService(m);
    expect(messages(r.errors)).toHaveLength(3);
    expectErrorAt(r, 'spec.rayClusterConfig.authOptions.enableK8sTokenAuth', 'not supported for RayService');
    expectErrorAt(r, 'spec.rayClusterConfig.rayVersion', '"2.50.0" is too old', '2.55.0');
    expectErrorAt(r, 'spec.rayClusterConfig.authOptions.secretName', '"s"');
  });

  test('token mode with a recent Ray is accepted', () => {
    const m = rayService();
    m.spec.rayClusterConfig.authOptions = { mode: 'token' };
    expectClean(validateRayService(m));
  });
});

// The ray.io/initializing-timeout annotation.
describe('ray.io/initializing-timeout', () => {
  const withTimeout = (value: unknown) => {
    const m = rayService();
    m.metadata.annotations = { [INITIALIZING_TIMEOUT_ANNOTATION]: value };
    return validateRayService(m);
  };

  test('unset or empty is not checked, as in KubeRay', () => {
    expectClean(withTimeout(''));
    expectClean(validateRayService(rayService()));
  });

  test('Go duration syntax: fractions, compound units, µs; no spaces, no unitless numbers but 0', () => {
    for (const v of ['1.5h', '1h30m', '90s', '.5s', '5.m', '+2m', '100µs', '100μs', '1000000000ns']) expect([v, initializingTimeoutProblem(v)]).toEqual([v, undefined]);
    for (const v of ['5 m', '5M', '1d', '.s', 'm', '1.2.3s', ' 300', '300 ', '1e3']) expect(initializingTimeoutProblem(v)).toContain('invalid format');
    expect(parseGoDuration('1h30m')).toBe(5_400_000_000_000n);
    expect(parseGoDuration('-1.5s')).toBe(-1_500_000_000n);
    expect(parseGoDuration('0.0000000001s')).toBe(0n);
    expect(initializingTimeoutProblem('0.0000000001s')).toContain('must be a positive duration');
    expect(parseGoDuration('9223372036854775807ns')).toBe(9_223_372_036_854_775_807n);
    expect(parseGoDuration('9223372036854775808ns')).toBeUndefined();
    expect(initializingTimeoutProblem('9223372036854775808')).toContain('invalid format');
    expect(initializingTimeoutProblem('007')).toBeUndefined();
  });
});
