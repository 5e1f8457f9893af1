/**
 * The consumer test (test/consumer): packs rayshift and installs the tarball into fresh projects
 * outside the repository, as a user does. It needs the test cluster and the Pulumi toolchain
 * (`npm run controlplane:build`, `npm run cluster:build`, `npm run pulumi:build`) and the npm registry.
 */
const { compilerOptions } = require('./tsconfig.json');

module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test/consumer'],
  testMatch: ['**/*.consumer.ts'],
  testTimeout: 600000,
  transform: {
    '^.+\\.tsx?$': ['ts-jest', { tsconfig: { ...compilerOptions, isolatedModules: true } }],
  },
};
