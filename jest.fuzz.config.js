/**
 * Fuzz suite (test/fuzz, files `*.fuzz.ts`): generated specs through the model, engine and cdk8s
 * synthesis, and generated requests against the API server on a real kube-apiserver (so it needs
 * `npm run controlplane:build` first, like the integration tests). Fixed seed by default; set
 * FUZZ_SEED to explore. ts-jest only transpiles (isolatedModules); tsc type-checks the files.
 */
const { compilerOptions } = require('./tsconfig.json');

module.exports = {
  preset: 'ts-jest',
  testEnvironment: 'node',
  roots: ['<rootDir>/test/fuzz'],
  testMatch: ['**/*.fuzz.ts'],
  testTimeout: 600000,
  transform: {
    '^.+\\.tsx?$': ['ts-jest', { tsconfig: { ...compilerOptions, isolatedModules: true } }],
  },
};
