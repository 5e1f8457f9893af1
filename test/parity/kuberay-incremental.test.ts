/**
 * Parity with the incremental-upgrade cases of KubeRay v1.7.0's
 * `controllers/ray/rayservice_controller_unit_test.go`: each case is one run of rayshift's engine
 * from the case's status (test/parity/kuberay-incremental-cases.ts). A deliberate difference must
 * show rayshift's own value and cite its README row.
 */
import { KUBERAY_INCREMENTAL_CASES } from './kuberay-incremental-cases';
import { expectDocumented, label } from './ledger';

describe('KubeRay v1.7.0 rayservice_controller_unit_test.go: incremental upgrade', () => {
  test.each(KUBERAY_INCREMENTAL_CASES.map((c) => [label(c), c] as const))('%s', (_title, c) => {
    const value = c.rayshift();
    if (c.difference === undefined) {
      expect(value).toEqual(c.upstream);
      return;
    }
    expect(value).toEqual(c.rayshiftValue);
    expect(value).not.toEqual(c.upstream);
    expectDocumented(c.difference);
  });
});
