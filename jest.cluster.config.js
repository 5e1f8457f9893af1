/**
 * The test cluster's suites (test/integration/cluster-*.test.ts): the real kube-scheduler,
 * kube-controller-manager, kwok, KubeRay operator and RBG controller beside the control plane (see
 * test/support/cluster.ts), two suites at a time: a suite mostly waits on its controllers' timers
 * and the API server (1.3 cores busy on average for two; the four longest suites took 736 s side by
 * side against 1390 s one after another, 30 November 2026), and each runs a dozen processes, so
 * more at once would starve them on a 2-core machine. They need `npm run controlplane:build` and
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
  maxWorkers: 2,
};
