/**
 * Unit tests: TypeScript run through ts-jest without type checking (`npm test` type-checks the
 * whole project with tsc first), so the large generated imports/ compile quickly. They need no
 * network and no ../shared: the suites that read upstream CRDs are jest.upstream.config.js's.
 */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/integration/', '<rootDir>/test/upstream-crd/'],
  transform: { '^.+\\.ts$': ['ts-jest', {}] },
  testTimeout: 60000,
};
