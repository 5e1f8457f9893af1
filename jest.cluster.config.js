/**
 * The test cluster's smoke tests (test/integration/cluster-*.test.ts): the real kube-scheduler,
 * kube-controller-manager, kwok, KubeRay operator and RBG controller beside the control plane (see
 * test/support/cluster.ts). They need `npm run controlplane:build` and `bash scripts/build-cluster.sh`
 * first and fail naming those builds otherwise, so the integration suite (jest.integration.config.js)
 * leaves them out until CI builds the cluster. Otherwise configured like the integration suite.
 */
const integration = require('./jest.integration.config.js');

module.exports = {
  ...integration,
  testMatch: ['**/cluster-*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/'],
  testTimeout: 300000,
};
