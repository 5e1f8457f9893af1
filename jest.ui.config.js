/**
 * Browser tests of the dashboard (`npm run test:ui`): playwright-core driving Debian's Chromium
 * against the real API server, the operator and a real kube-apiserver (so they need
 * `npm run controlplane:build`, `npm run build:ui` and `apt-get install chromium`). Files are named
 * `*.spec.ts` so the unit suite (`*.test.ts` under test/) does not pick them up. ts-jest only
 * transpiles; `tsc -p tsconfig.test.json` type-checks them.
 */
const { compilerOptions } = require('./tsconfig.json');

module.exports = {
  preset: 'ts-jest',
  testEnvironment: 'node',
  roots: ['<rootDir>/test/ui'],
  testMatch: ['**/*.spec.ts'],
  testTimeout: 300000,
  transform: {
    '^.+\\.tsx?$': ['ts-jest', { tsconfig: { ...compilerOptions, isolatedModules: true } }],
  },
};
