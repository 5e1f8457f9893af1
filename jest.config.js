/**
 * Unit tests: TypeScript run through ts-jest without type checking (`npm test` type-checks the
 * whole project with tsc first), so the large generated imports/ compile quickly.
 */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/integration/'],
  transform: { '^.+\\.ts$': ['ts-jest', {}] },
  testTimeout: 60000,
};
