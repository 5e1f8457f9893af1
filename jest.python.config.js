/**
 * The Python test (test/python): builds the `rayshift-cdk8s` wheel with jsii (scripts/build-python.sh),
 * installs it with cdk8s, cdk8s-plus-28 and constructs from PyPI into a fresh virtualenv, and
 * compares Python apps with their TypeScript twins. Needs python3 with venv and the PyPI registry.
 */
const { compilerOptions } = require('./tsconfig.json');

module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test/python'],
  testMatch: ['**/*.python.ts'],
  testTimeout: 600000,
  transform: {
    '^.+\\.tsx?$': ['ts-jest', { tsconfig: { ...compilerOptions, isolatedModules: true } }],
  },
};
