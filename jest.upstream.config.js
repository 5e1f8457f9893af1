/**
 * The suites that read upstream CRDs themselves (KubeRay, Gateway API and RBG releases rayshift
 * pins, from ../shared/crds, the cache or the pinned URLs; lib/crds/resolve.ts): every synthesized
 * object against the real schemas, and the committed generated files against a fresh render. `npm
 * test` runs without them so that it needs no network and no ../shared; `.ci/run` runs them right
 * after it. Like the unit suite, ts-jest without type checking (`npm test` type-checks the tests).
 */
const unit = require('./jest.config.js');

module.exports = {
  ...unit,
  roots: ['<rootDir>/test/upstream-crd'],
  testPathIgnorePatterns: ['/node_modules/'],
};
