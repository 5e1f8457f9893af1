/**
 * End-to-end tests (test/e2e, files named *.e2e.ts so that the unit run, which roots test/, skips
 * them): real Ray heads, a real Traefik, a real kube-apiserver and the operator, under load. They need `npm run controlplane:build` and `npm run e2e:setup` first, root
 * for network namespaces (else the root-namespace port plan), and run one file at a time
 * (`--runInBand`): the machine has 2 cores. ts-jest only transpiles here (isolatedModules); type-check
 * the tests with tsc. The compiler options are tsconfig.json's plus isolatedModules, passed inline so
 * that ts-jest does not warn about its deprecated `isolatedModules` option.
 */
const { compilerOptions } = require('./tsconfig.json');

module.exports = {
  preset: 'ts-jest',
  testEnvironment: 'node',
  roots: ['<rootDir>/test/e2e'],
  testMatch: ['**/*.e2e.ts'],
  testTimeout: 1800000,
  transform: {
    '^.+\\.tsx?$': ['ts-jest', { tsconfig: { ...compilerOptions, isolatedModules: true } }],
  },
};
