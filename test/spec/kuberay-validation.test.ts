/**
 * KubeRay v1.7.0's token-authentication and initializing-timeout rules, case by case from its
 * `controllers/ray/utils/validation_test.go` (each block names the Go test it ports). KubeRay stops
 * at the first error; rayshift reports every one, so each case checks that the rule's error is
 * among them (or that there is none).
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

// TestValidateRayClusterSpecRayVersionForAuth: mode "token", EnableK8sTokenAuth as given.
describe('TestValidateRayClusterSpecRayVersionForAuth', () => {
  test.each([
    ['Valid Ray version 2.52.0', '2.52.0', false, undefined],
    ['Invalid Ray version 2.52.0 with k8s token auth', '2.52.0', true, ['rayVersion', '"2.52.0" is too old', '2.55.0']],
    ['Valid Ray version 2.55.0 with k8s token auth', '2.55.0', true, undefined],
    ['Valid Ray version 3.0.0', '3.0.0', false, undefined],
    ['Valid Ray version 3.0.0 with k8s token auth', '3.0.0', true, undefined],
    ['Invalid Ray version 2.50.0', '2.50.0', false, ['rayVersion', '"2.50.0" is too old', 'authOptions.mode is "token"', '2.52.0 or later']],
    ['Invalid Ray version format', 'invalid-version', false, ['rayVersion', '"invalid-version" is not a version', 'could not parse "invalid-version" as version']],
    ['Empty Ray version', '', false, ['rayVersion', 'is required when authOptions.mode is "token"', '2.52.0 or later']],
  ] as const)('%s', (_, version, k8s, expected) => {
    const r = validateRayAuth(clusterSpec(version, { mode: 'token', enableK8sTokenAuth: k8s }), false);
    if (expected === undefined) expectClean(r);
    else expectOnlyError(r, expected[0], ...expected.slice(1));
  });

  test('versions parse as version.ParseGeneric does: a suffix is ignored, one component or a leading zero is not a version', () => {
    expectClean(validateRayAuth(clusterSpec('2.52.0rc1', { mode: 'token' }), false));
    expectClean(validateRayAuth(clusterSpec('v2.53', { mode: 'token' }), false));
    expectOnlyError(validateRayAuth(clusterSpec('2', { mode: 'token' }), false), 'rayVersion', 'illegal version string');
    expectOnlyError(validateRayAuth(clusterSpec('02.52.0', { mode: 'token' }), false), 'rayVersion', 'zero-prefixed');
    expectOnlyError(validateRayAuth(clusterSpec('2.51.99', { mode: 'token' }), false), 'rayVersion', 'too old');
  });
});

// TestValidateRayClusterSpec_Auth: RayVersion 2.55.0, mode "token".
describe('TestValidateRayClusterSpec_Auth', () => {
  test('enableK8sTokenAuth=true and secretName set', () => {
    const r = validateRayAuth(clusterSpec('2.55.0', { mode: 'token', enableK8sTokenAuth: true, secretName: 'my-secret' }), false);
    expectOnlyError(r, 'authOptions.secretName', 'must be unset when authOptions.enableK8sTokenAuth is true', '"my-secret"');
  });

  test('enableK8sTokenAuth=true and secretName unset', () => {
    expectClean(validateRayAuth(clusterSpec('2.55.0', { mode: 'token', enableK8sTokenAuth: true }), false));
  });

  test('enableK8sTokenAuth=false and secretName set', () => {
    expectClean(validateRayAuth(clusterSpec('2.55.0', { mode: 'token', secretName: 'my-secret' }), false));
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

// TestValidateRayServiceSpec: "RayService does not support K8s token auth mode", and the auth rules
// reached through the RayService validator.
describe('TestValidateRayServiceSpec (authOptions)', () => {
  test('RayService does not support K8s token auth mode', () => {
    const m = rayService();
    m.spec.rayClusterConfig.rayVersion = '2.55.0';
    m.spec.rayClusterConfig.authOptions = { mode: 'token', enableK8sTokenAuth: true };
    expectOnlyError(validateRayService(m), 'spec.rayClusterConfig.authOptions.enableK8sTokenAuth', 'not supported for RayService');
  });

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

// TestValidateRayServiceMetadata: the ray.io/initializing-timeout annotation.
describe('TestValidateRayServiceMetadata (ray.io/initializing-timeout)', () => {
  const PATH = `metadata.annotations["${INITIALIZING_TIMEOUT_ANNOTATION}"]`;
  const withTimeout = (value: unknown) => {
    const m = rayService();
    m.metadata.annotations = { [INITIALIZING_TIMEOUT_ANNOTATION]: value };
    return validateRayService(m);
  };

  test.each(['5m', '300'])('valid: %p', (v) => expectClean(withTimeout(v)));

  test.each([
    ['0', 'must be a positive'],
    ['-100', 'must be a positive'],
    ['-5m', 'must be a positive duration'],
    ['invalid', 'invalid format'],
  ])('invalid: %p (%s)', (v, words) => {
    expectOnlyError(withTimeout(v), PATH, words, `got ${JSON.stringify(v)}`);
  });

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
