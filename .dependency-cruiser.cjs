/**
 * The import rules of ARCHITECTURE.md, checked by dependency-cruiser in `npm test`
 * (`npm run check:imports`). `LAYERS` is the table of ARCHITECTURE.md's "Layers" section, in the
 * same order (test/architecture/import-rules.test.ts holds the two together): each layer names its
 * folder and the layers it may import. Everything else is forbidden, plus the rules below it.
 */

/** Layer name → folder (a path prefix) and the layers it may import besides itself. */
const LAYERS = [
  { name: 'spec', path: 'lib/spec/', mayImport: [] },
  { name: 'engine', path: 'lib/engine/', mayImport: ['spec'] },
  { name: 'runtime', path: 'lib/runtime/', mayImport: ['spec', 'engine'] },
  { name: 'crds', path: 'lib/crds/', mayImport: ['spec', 'runtime'] },
  { name: 'imports', path: 'imports/', mayImport: [] },
  { name: 'cdk8s', path: 'lib/cdk8s/', mayImport: ['spec', 'engine'] },
  { name: 'pulumi', path: 'lib/pulumi/', mayImport: ['spec', 'engine', 'runtime', 'cdk8s'] },
  { name: 'dashboard', path: 'lib/dashboard/', mayImport: ['runtime'] },
  { name: 'apiserver', path: 'lib/apiserver/', mayImport: ['spec', 'engine', 'runtime', 'dashboard'] },
  { name: 'cli', path: 'lib/cli/', mayImport: ['spec', 'engine', 'runtime', 'crds', 'dashboard', 'apiserver'] },
  { name: 'entry', path: 'lib/index.ts', mayImport: ['spec', 'engine', 'cdk8s'] },
  { name: 'operator', path: 'operator/', mayImport: ['spec', 'engine', 'runtime', 'cli'] },
  { name: 'chart', path: 'operator/chart/', mayImport: ['spec', 'cdk8s', 'crds'] },
];

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** A layer's own files: its prefix, minus the layers nested in it (operator/chart in operator/). */
const filesOf = (layer) => ({
  path: `^${escape(layer.path)}`,
  pathNot: LAYERS.filter((l) => l !== layer && l.path.startsWith(layer.path)).map((l) => `^${escape(l.path)}`),
});
const byName = Object.fromEntries(LAYERS.map((l) => [l.name, l]));

const layerRules = LAYERS.map((layer) => {
  const from = filesOf(layer);
  const allowed = [layer, ...layer.mayImport.map((n) => byName[n])].map((l) => filesOf(l));
  return {
    name: `layer-${layer.name}`,
    comment: `${layer.path} may import only ${[layer.name, ...layer.mayImport].join(', ')} (ARCHITECTURE.md, Layers)`,
    severity: 'error',
    from: { path: from.path, ...(from.pathNot.length ? { pathNot: from.pathNot } : {}) },
    // Any project file outside the allowed layers' own files; nested layers count as outside.
    to: {
      path: '^(lib|operator|imports|test|bench|examples|scripts|ui)/',
      pathNot: allowed.map((a) => (a.pathNot.length ? `^(?!${a.pathNot.map((p) => p.slice(1)).join('|')})${a.path.slice(1)}` : a.path)),
    },
  };
});

/**
 * What the package publishes: package.json's `exports` (`rayshift`, `rayshift/pulumi`,
 * `rayshift/operator`), the two modules bin/rayshift.js composes into the CLI, and the Pulumi plugin's
 * provider that pulumi-plugin/index.js runs. The CRD catalog, its resolver and what builds from it
 * (regenerate, schema-table) are development-time
 * (`npm run import`, tests); lib/apiserver/gen is generated.
 */
const ENTRY_POINTS = '^(lib/index|lib/pulumi/index|lib/pulumi/plugin/provider|operator/chart/index|lib/cli/main|operator/command)\\.ts$';

/** Node modules that do I/O: the pure layers never import them. */
const IO_MODULES = '^(node:)?(fs|fs/promises|http|https|http2|net|tls|dgram|child_process|worker_threads)$';

module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'pure-layers-do-no-io',
      comment: 'the model, the engine and the constructs decide and render; I/O is lib/runtime\'s (ARCHITECTURE.md, Rules)',
      severity: 'error',
      from: { path: '^(lib/spec|lib/engine|lib/cdk8s|imports)/' },
      to: { path: IO_MODULES, dependencyTypes: ['core'] },
    },
    {
      name: 'network-clients-in-runtime',
      comment: 'outbound calls go through lib/runtime; servers are the API server\'s, the dashboard command\'s and the operator\'s health port (ARCHITECTURE.md, Rules)',
      severity: 'error',
      from: { path: '^(lib|operator)/', pathNot: ['^lib/runtime/', '^lib/apiserver/', '^lib/cli/dashboard-command\\.ts$', '^operator/run\\.ts$', '^lib/crds/resolve\\.ts$'] },
      to: { path: '^(node:)?(http|https|http2|net|tls)$', dependencyTypes: ['core'] },
    },
    {
      name: 'crd-downloads-are-development-time',
      comment: 'lib/crds/resolve.ts fetches pinned CRDs for scripts and tests; the package never reaches it (no outbound call the user did not configure)',
      severity: 'error',
      from: { path: '^(lib|operator)/', pathNot: ['^lib/crds/(resolve|regenerate|schema-table)\\.ts$'] },
      to: { path: '^lib/crds/(resolve|regenerate)\\.ts$' },
    },
    {
      name: 'reached-from-an-entry-point',
      comment: 'every module of lib/ and operator/ is reached from what the package publishes (package.json exports and bin/rayshift.js); code only tests use belongs in test/ (ARCHITECTURE.md, Rules)',
      severity: 'error',
      from: { path: ENTRY_POINTS },
      to: { path: '^(lib|operator)/', pathNot: [ENTRY_POINTS, '^lib/crds/(resolve|regenerate|schema-table|catalog)\\.ts$', '^lib/apiserver/gen/'], reachable: false },
    },
    {
      name: 'runtime-applies-no-spec-rules',
      comment: "lib/runtime carries decisions out: of lib/spec it uses names, readers, the model's entry points (validate, resolve) and types; the model's rules (checks, defaults, shapes) are reached only through those entry points or the engine (ARCHITECTURE.md, Rules)",
      severity: 'error',
      from: { path: '^lib/runtime/' },
      to: {
        path: '^lib/spec/',
        // percent: reading RBG's int-or-percent fields as RBG resolves them (an observation, like KubeRay's status defaults).
        pathNot: ['^lib/spec/(read|object-names|canonical-json|gateway|problem|rayservice|rbg|rbg-releases|percent|upgrade-strategy)\\.ts$'],
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'executor-only-executes',
      comment: "the RayService executor carries out the pass plan's steps: it imports from lib/engine types only, never a rule (ARCHITECTURE.md, One traffic step)",
      severity: 'error',
      from: { path: '^lib/runtime/rayservice/execute\\.ts$' },
      to: { path: '^lib/(engine|spec)/', pathNot: ['^lib/spec/(read|object-names)\\.ts$'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'no-circular',
      comment: 'a cycle makes two modules one; split what they share instead (a cycle closed only by `import type` is erased at compile time and allowed)',
      severity: 'error',
      from: { path: '^(lib|operator)/' },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(build|dist|dist-ui|node_modules)/' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
  },
};
// Not part of dependency-cruiser's schema: read by the test that holds ARCHITECTURE.md to it.
Object.defineProperty(module.exports, 'LAYERS', { value: LAYERS, enumerable: false });
