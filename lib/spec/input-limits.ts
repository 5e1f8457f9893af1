/**
 * Limits on the user data rayshift parses: the Serve config's YAML text and the structured values
 * (Structs, JSON objects) of API requests. Parsing is the costly part of a hostile input (400 KB of
 * nested `[[[…` stalls the `yaml` parser for seconds; 16 KB of `- - - …` makes it crash the process),
 * so the text is measured here before it is parsed, with a scan whose cost is linear in the size and
 * which stops at the first limit passed. The CLI, the constructs, the operator and the API server all
 * parse a Serve config through `parseServeConfig`, so all of them refuse the same inputs.
 */
import { Lexer } from 'yaml';
import { utf8Length } from './text-length';

/** Limits of a Serve config (`spec.serveConfigV2`), a YAML text. */
export interface ServeConfigLimits {
  /** Largest text, in UTF-8 bytes. */
  readonly maxBytes: number;
  /** Deepest nesting of collections (a top-level mapping is depth 1). */
  readonly maxDepth: number;
  /** Most nodes: every scalar, collection, mapping key and alias (an alias counts as what it expands to). */
  readonly maxNodes: number;
  /** Most aliases (`*name`). */
  readonly maxAliases: number;
}

/**
 * The Serve config limits. Ray's own examples are under 2 KB and 10 levels; 64 KiB is room for
 * large `args` and `runtime_env` while keeping the scan and the parse of a refused text in
 * milliseconds.
 */
export const SERVE_CONFIG_LIMITS: ServeConfigLimits = { maxBytes: 64 * 1024, maxDepth: 64, maxNodes: 10_000, maxAliases: 100 };

/** Limits of a structured value of a request (a JSON body, a protobuf message with Structs). */
export interface StructLimits {
  /** Deepest nesting of objects, arrays and messages (the request itself is depth 1). */
  readonly maxDepth: number;
  /** Most values: every object, array, message and leaf value (keys are not counted). */
  readonly maxValues: number;
}

/**
 * The limits of an API request's structured values. A RayService request nests about 15 levels
 * (a pod template's affinity inside `ray_cluster_config`) and a large one holds a few thousand
 * values; Kubernetes keeps objects under 1.5 MiB, about 50 000 values.
 */
export const STRUCT_LIMITS: StructLimits = { maxDepth: 64, maxValues: 50_000 };

/** The first limit of `limits` that `yaml` passes, as a problem description, or undefined. */
export function serveConfigLimitProblem(yaml: string, limits: ServeConfigLimits = SERVE_CONFIG_LIMITS): string | undefined {
  // Length in UTF-16 units is at most the UTF-8 length, so a text longer than the limit is refused without counting.
  const bytes = yaml.length > limits.maxBytes ? yaml.length : utf8Length(yaml);
  if (bytes > limits.maxBytes) return `is ${bytes > yaml.length ? bytes : `at least ${bytes}`} bytes, more than the limit of ${limits.maxBytes} bytes`;
  return yamlShapeProblem(yaml, limits);
}

/**
 * A lower bound of the nesting depth, node count and alias count of a YAML text, from the tokens of
 * the `yaml` package's own lexer (linear, constant memory), checked against `limits` as it goes.
 * Depth: in block style every nested collection starts further right than its parent (a sequence
 * under a mapping key may share its column), so the columns of the node starts still open are each a
 * collection around the current node; flow collections (`[`, `{`) count one each. A text within the
 * limits therefore nests at most about 3 × `maxDepth` deep, which is what the parser's recursion
 * meets; the exact count is checked on the parsed value (`valueLimitProblem`).
 */
function yamlShapeProblem(yaml: string, limits: ServeConfigLimits): string | undefined {
  const columns: number[] = [];
  let flow = 0;
  let nodes = 0;
  let aliases = 0;
  let column = 0;
  // A node may start here: at the start of a line, or after a block indicator (`- `, `? `, `: `, `--- `).
  let nodeStart = true;
  const tooDeep = (at: number) => `nests deeper than the limit of ${limits.maxDepth} levels (at line ${lineOf(yaml, at)})`;
  let offset = 0;
  for (const token of new Lexer().lex(yaml)) {
    const first = token[0];
    if (token === '\x02' || token === '\x1f') {
      // Markers (document, scalar) take no room in the text.
      if (token === '\x1f' && ++nodes > limits.maxNodes) return `has more than the limit of ${limits.maxNodes} nodes`;
      continue;
    }
    const start = offset;
    offset += token.length;
    if (token === '\x18') {
      flow = 0;
      continue;
    }
    if (token === '' || token === '\n' || token === '\r\n') {
      column = 0;
      nodeStart = flow === 0;
      continue;
    }
    if (first === ' ' || first === '\t' || first === '#') {
      column += token.length;
      continue;
    }
    if (flow === 0 && nodeStart) {
      while (columns.length > 0 && columns[columns.length - 1] > column) columns.pop();
      if (columns.length === 0 || columns[columns.length - 1] < column) columns.push(column);
      if (columns.length - 1 > limits.maxDepth) return tooDeep(start);
    }
    if (token === '[' || token === '{') {
      if (++nodes > limits.maxNodes) return `has more than the limit of ${limits.maxNodes} nodes`;
      if (Math.max(0, columns.length - 1) + ++flow > limits.maxDepth) return tooDeep(start);
    } else if (token === ']' || token === '}') {
      flow = Math.max(0, flow - 1);
    } else if (first === '"' || first === "'") {
      if (++nodes > limits.maxNodes) return `has more than the limit of ${limits.maxNodes} nodes`;
    } else if (first === '*') {
      if (++aliases > limits.maxAliases) return `has more than the limit of ${limits.maxAliases} aliases`;
      if (++nodes > limits.maxNodes) return `has more than the limit of ${limits.maxNodes} nodes`;
    } else if (token === '---' || token === '...') {
      columns.length = 0;
      flow = 0;
    }
    nodeStart = flow === 0 && (token === '-' || token === '?' || token === ':' || token === '---');
    const newline = token.lastIndexOf('\n');
    column = newline < 0 ? column + token.length : token.length - newline - 1;
  }
  return undefined;
}

/** The 1-based line of `offset` in `text`. */
function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

/**
 * The first limit a parsed value passes, exactly: its nesting depth (collections only) and its nodes
 * (every value and mapping key; an alias counts as many nodes as it expands to, since `yaml` hands it
 * on as a shared reference that every later reader walks again). Iterative, and it stops at the first
 * limit passed, so a value shared many times costs at most `maxNodes` steps.
 */
export function valueLimitProblem(value: unknown, limits: { readonly maxDepth: number; readonly maxNodes: number }): string | undefined {
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  let nodes = 0;
  while (stack.length > 0) {
    const { value: v, depth } = stack.pop()!;
    if (++nodes > limits.maxNodes) return `has more than the limit of ${limits.maxNodes} nodes`;
    if (v === null || typeof v !== 'object') continue;
    if (depth + 1 > limits.maxDepth) return `nests deeper than the limit of ${limits.maxDepth} levels`;
    if (Array.isArray(v)) {
      for (const item of v) stack.push({ value: item, depth: depth + 1 });
    } else {
      for (const [, item] of Object.entries(v)) {
        if (++nodes > limits.maxNodes) return `has more than the limit of ${limits.maxNodes} nodes`;
        stack.push({ value: item, depth: depth + 1 });
      }
    }
  }
  return undefined;
}
