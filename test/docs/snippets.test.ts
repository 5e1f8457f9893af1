/**
 * Docs that compile: every ```ts / ```typescript block of README.md and docs/*.md is written to its
 * own file under build/doc-snippets/ and all of them are type-checked in one TypeScript program,
 * importing the package by its public names ('rayshift', 'rayshift/pulumi', 'rayshift/operator')
 * exactly as a reader's project would. A block that is not meant to compile must use another fence
 * language (```text, ```sh, ```yaml); there is no way to exempt a TypeScript block.
 *
 * The snippets live inside the repository (build/ is git-ignored) so that `cdk8s`, `constructs`,
 * `@pulumi/pulumi` and the rest resolve from its node_modules. After a run, `npx tsc -p
 * build/doc-snippets` shows a snippet's errors by hand, along with the library's own findings under
 * the snippets' options, which this test leaves to the project's tsc run.
 */
import * as fs from 'fs';
import * as path from 'path';
import * as ts from 'typescript';

const ROOT = path.resolve(__dirname, '..', '..');

/** A TypeScript block of a Markdown file. */
interface Snippet {
  /** The Markdown file, relative to the repository root. */
  readonly file: string;
  /** 1-based line in that file of the block's first code line (the line after the fence). */
  readonly line: number;
  /** The block's code, indentation of the fence removed. */
  readonly code: string;
}

/** One compiler error, located in the Markdown file it came from. */
interface SnippetError {
  /** `FILE:LINE`, the line of the error in the Markdown file. */
  readonly at: string;
  /** 1-based line of the block's first code line, to find the block. */
  readonly blockLine: number;
  /** `TS2304: Cannot find name 'chart'.` */
  readonly message: string;
}

/**
 * The TypeScript blocks of a Markdown document. Follows CommonMark's fences: ``` or ~~~, at least
 * three, closed by the same character at least as long; a fence indented inside a list item has
 * that indentation removed from its lines.
 */
function extractSnippets(markdown: string, file: string): Snippet[] {
  const lines = markdown.split(/\r?\n/);
  const snippets: Snippet[] = [];
  let open: { marker: string; indent: number; ts: boolean; start: number; body: string[] } | undefined;
  lines.forEach((text, i) => {
    if (open === undefined) {
      const m = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)/.exec(text);
      if (m) open = { marker: m[2], indent: m[1].length, ts: /^(ts|typescript)$/i.test(m[3]), start: i + 1, body: [] };
      return;
    }
    const close = /^\s*(`{3,}|~{3,})\s*$/.exec(text);
    if (close && close[1][0] === open.marker[0] && close[1].length >= open.marker.length) {
      if (open.ts) snippets.push({ file, line: open.start + 1, code: open.body.join('\n') + '\n' });
      open = undefined;
      return;
    }
    const indent = open.indent;
    open.body.push(text.slice(Math.min(indent, text.length - text.trimStart().length)));
  });
  if (open?.ts) throw new Error(`${file}:${open.start}: unclosed code fence`);
  return snippets;
}

/** The Markdown files whose TypeScript blocks must compile: README.md and docs/*.md. */
function documentedFiles(): string[] {
  const docs = fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`);
  return ['README.md', ...docs];
}

/**
 * Compiler options of the snippets: the README's tsconfig for a user's project (ES2022, `node16`
 * modules, which resolve the package's `exports` and compile these files as CommonJS, the
 * repository's package type) with the project's strictness (unused names included, so no snippet
 * imports what it never uses), Node's types only (no jest globals), every file a module of its own
 * (two snippets may both declare `app`), and the public entry points mapped onto the sources.
 */
const SNIPPET_TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    lib: ['ES2022'],
    module: 'node16',
    moduleResolution: 'node16',
    strict: true,
    noUnusedLocals: true,
    noUnusedParameters: true,
    noImplicitReturns: true,
    esModuleInterop: true,
    resolveJsonModule: true,
    skipLibCheck: true,
    noEmit: true,
    types: ['node'],
    moduleDetection: 'force',
    baseUrl: '../..',
    paths: {
      rayshift: ['lib/index.ts'],
      'rayshift/pulumi': ['lib/pulumi/index.ts'],
      'rayshift/operator': ['operator/chart/index.ts'],
    },
  },
};

/**
 * Parsed files shared by every program of this test file: the library and the generated imports/
 * behind 'rayshift' are most of the work, and the compiler options of both programs are the same,
 * so the second program (the self-test) reuses the first one's parse.
 */
const sourceFiles = new Map<string, ts.SourceFile | undefined>();

/**
 * Writes `snippets` into `dir` (emptied first; two levels below the repository root, which the
 * tsconfig's `baseUrl` assumes) with a tsconfig.json, and type-checks them in one program. Only
 * the snippets' own diagnostics are collected: the library is checked by the project's tsc run,
 * and asking the checker about the snippets alone keeps it from checking all of imports/.
 */
function compileSnippets(snippets: readonly Snippet[], dir: string): SnippetError[] {
  if (path.relative(ROOT, path.dirname(path.dirname(dir))) !== '') throw new Error(`${dir} must be two levels below ${ROOT}`);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const byFile = new Map<string, Snippet>();
  for (const s of snippets) {
    const name = `${s.file.replace(/\.md$/, '').replace(/[^A-Za-z0-9]+/g, '-')}-L${s.line}.ts`;
    fs.writeFileSync(path.join(dir, name), s.code);
    byFile.set(path.join(dir, name), s);
  }
  const configPath = path.join(dir, 'tsconfig.json');
  fs.writeFileSync(configPath, JSON.stringify({ ...SNIPPET_TSCONFIG, files: [...byFile.keys()].map((f) => path.basename(f)) }, null, 2) + '\n');

  const parsed = ts.getParsedCommandLineOfConfigFile(configPath, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => { throw new Error(flatten(d)); } });
  if (!parsed || parsed.errors.length > 0) throw new Error(`${configPath}: ${(parsed?.errors ?? []).map(flatten).join('; ')}`);
  const host = ts.createCompilerHost(parsed.options);
  const read = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, languageVersion, onError, shouldCreate) => {
    if (byFile.has(path.resolve(fileName))) return read(fileName, languageVersion, onError, shouldCreate);
    const key = `${typeof languageVersion === 'object' ? JSON.stringify(languageVersion) : languageVersion}:${fileName}`;
    if (!sourceFiles.has(key)) sourceFiles.set(key, read(fileName, languageVersion, onError, shouldCreate));
    return sourceFiles.get(key);
  };
  const program = ts.createProgram({ rootNames: parsed.fileNames, options: parsed.options, host });

  const errors: SnippetError[] = [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()].map((d) => ({
    at: configPath,
    blockLine: 0,
    message: `TS${d.code}: ${flatten(d)}`,
  }));
  for (const [fileName, snippet] of byFile) {
    const sf = program.getSourceFile(fileName);
    if (!sf) throw new Error(`${fileName} is not in the program`);
    for (const d of [...program.getSyntacticDiagnostics(sf), ...program.getSemanticDiagnostics(sf)]) {
      const line = d.start === undefined ? 0 : sf.getLineAndCharacterOfPosition(d.start).line;
      errors.push({ at: `${snippet.file}:${snippet.line + line}`, blockLine: snippet.line, message: `TS${d.code}: ${flatten(d)}` });
    }
  }
  return errors;
}

function flatten(d: ts.Diagnostic): string {
  return ts.flattenDiagnosticMessageText(d.messageText, '\n  ');
}

/** One line per error, as a failing test prints them. */
function report(errors: readonly SnippetError[]): string {
  return errors.map((e) => `${e.at} (block at line ${e.blockLine}): ${e.message}`).join('\n');
}

describe('TypeScript blocks of README.md and docs/*.md', () => {
  test('every block compiles as written against the public entry points', () => {
    const snippets = documentedFiles().flatMap((file) => extractSnippets(fs.readFileSync(path.join(ROOT, file), 'utf8'), file));
    // The README alone has the install section's cdk8s app and Pulumi program and the constructs'
    // examples; far fewer blocks means the extractor lost them, not that the docs are fine.
    expect(snippets.length).toBeGreaterThanOrEqual(8);
    expect(report(compileSnippets(snippets, path.join(ROOT, 'build', 'doc-snippets')))).toBe('');
  }, 180_000);

  test('a block with a type error fails and is reported with its file and line', () => {
    const markdown = [
      '# A page', //                                                     line 1
      '',
      '```ts',
      "import { App, Chart } from 'cdk8s';",
      "import { HttpRoute } from 'rayshift';",
      '',
      'const app = new App();',
      "const chart = new Chart(app, 'demo');",
      "new HttpRoute(chart, 'route', { parents: [], rules: [{ backendRefs: [{ name: 'svc', port: 8000 }] }] });",
      'app.synth();',
      '```',
      '',
      '- in a list:',
      '',
      '  ```typescript',
      "  import { HttpRoute } from 'rayshift';", //                    line 16
      '',
      "  new HttpRoute(chart, 'route', { parents: [], rules: [{ backendRefs: [{ name: 'svc', port: '8000' }] }] });", // line 18
      '  ```',
      '',
      '```text',
      'not TypeScript: never compiled',
      '```',
    ].join('\n');
    const snippets = extractSnippets(markdown, 'docs/broken.md');
    expect(snippets.map((s) => s.line)).toEqual([4, 16]);

    const errors = compileSnippets(snippets, path.join(ROOT, 'build', 'doc-snippets-selftest'));
    // The first block is complete and compiles; the second uses a `chart` it never defines (what
    // README blocks used to do) and passes a port as a string.
    expect(errors.map((e) => `${e.at} ${e.message.slice(0, 6)}`)).toEqual(['docs/broken.md:18 TS2304', 'docs/broken.md:18 TS2322']);
    expect(report(errors)).toContain("docs/broken.md:18 (block at line 16): TS2304: Cannot find name 'chart'.");
  }, 180_000);
});
