/**
 * Parity with KubeRay v1.7.0's validation tests (`controllers/ray/utils/validation_test.go`): every
 * case a RayService can reach runs through rayshift's validation. KubeRay stops at the first
 * error and rayshift reports all of them, so a rejection is any error, and where KubeRay's error
 * names a field rayshift must report an error at that field. A case marked as a deliberate
 * difference must differ, and its README row must exist.
 */
import { ProblemList, ValidationResult, validateRayAuth, validateRayClusterConfig, validateRayService } from '../../lib/spec';
import { KUBERAY_CLUSTER_CASES } from './kuberay-cluster-cases';
import { KUBERAY_SERVICE_CASES } from './kuberay-service-cases';
import type { ValidationCase } from './kuberay-manifests';
import { expectDocumented, label } from './ledger';

/** rayshift's checks of a RayCluster spec: its shape and rules, then token authentication in a RayCluster (not a RayService). */
function validateClusterSpec(spec: unknown): ValidationResult {
  const problems = new ProblemList();
  problems.addAll(validateRayClusterConfig(spec));
  problems.addAll(validateRayAuth(spec, false));
  return problems.result();
}

function run(c: ValidationCase): ValidationResult {
  return 'service' in c ? validateRayService(c.service) : validateClusterSpec(c.cluster);
}

describe.each([
  ['RayService validators and core RayCluster rules', KUBERAY_SERVICE_CASES],
  ['RayCluster features rayshift passes through', KUBERAY_CLUSTER_CASES],
] as const)('KubeRay v1.7.0 validation_test.go: %s', (_, cases) => {
  test.each(cases.map((c) => [label(c), c] as const))('%s', (_title, c) => {
    const result = run(c);
    const rayshift = result.errors.length > 0 ? 'rejected' : 'accepted';
    if (c.difference !== undefined) {
      expect({ rayshift, upstream: c.upstream }).toEqual({ rayshift: c.upstream === 'accepted' ? 'rejected' : 'accepted', upstream: c.upstream });
      expectDocumented(c.difference);
      return;
    }
    expect({ rayshift, errors: result.errors }).toEqual({ rayshift: c.upstream, errors: c.upstream === 'accepted' ? [] : expect.anything() });
    if (c.path !== undefined) {
      const messages = result.errors.filter((e) => e.path === c.path).map((e) => e.message);
      expect({ path: c.path, found: messages.some((m) => (c.words ?? []).every((w) => m.includes(w))) }).toEqual({ path: c.path, found: true });
    }
  });
});
