/**
 * Unit tests: TypeScript run through ts-jest without type checking (`npm test` type-checks the
 * whole project with tsc first), so the large generated imports/ compile quickly. They need no
 * network and no ../shared: the suites that read upstream CRDs are jest.upstream.config.js's.
 */
const os = require('node:os');

module.exports = {
  testEnvironment: 'node',
  // At least two workers: jest's default is one fewer than the cores, which is one on a 2-core CI
  // machine, where the second core sat idle once the background builds were warm.
  maxWorkers: Math.max(2, os.availableParallelism() - 1),
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/integration/', '<rootDir>/test/upstream-crd/'],
  transform: { '^.+\\.ts$': ['ts-jest', {}] },
  testTimeout: 60000,
};
