/**
 * The test cluster's suites (test/integration/cluster-*.test.ts): the real kube-scheduler,
 * kube-controller-manager, kwok, KubeRay operator and RBG controller beside the control plane (see
 * test/support/cluster.ts), one suite at a time. They need `npm run controlplane:build` and
 * `npm run cluster:build` first and fail naming those builds otherwise; the Pulumi plugin's block
 * runs the provider from `build/`, so `npm run build` as well. Otherwise configured like
 * the integration suite (jest.integration.config.js), which leaves them out.
 */
const integration = require('./jest.integration.config.js');

module.exports = {
  ...integration,
  testMatch: ['**/cluster-*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/'],
  testTimeout: 300000,
};
