/**
 * Integration tests: they start a real kube-apiserver + etcd (test/support/controlplane.ts), so they
 * need `npm run controlplane:build` first; the operator's and the API server's suites start the test
 * cluster with KubeRay (test/support/operator-env.ts), so they also need `npm run cluster:build`. ts-jest only transpiles here (isolatedModules); type-check
 * the tests with tsc. The compiler options are tsconfig.json's plus isolatedModules, passed inline so
 * that ts-jest does not warn about its deprecated `isolatedModules` option.
 */
const { compilerOptions } = require('./tsconfig.json');

module.exports = {
  preset: 'ts-jest',
  testEnvironment: 'node',
  roots: ['<rootDir>/test/integration'],
  testMatch: ['**/*.test.ts'],
  // The test cluster's own suites (many processes each) run two at a time: jest.cluster.config.js runs them.
  testPathIgnorePatterns: ['/node_modules/', '/cluster-[^/]*\\.test\\.ts$'],
  testTimeout: 120000,
  // Two suites at a time: jest's default on 2 cores is one. The suites mostly wait on the API
  // server; side by side they kept 1.8 cores busy and took 631 s where one after another they took
  // 861 s (30 November 2026).
  maxWorkers: 2,
  transform: {
    '^.+\\.tsx?$': ['ts-jest', { tsconfig: { ...compilerOptions, isolatedModules: true } }],
  },
};
