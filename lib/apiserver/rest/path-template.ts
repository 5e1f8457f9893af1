/**
 * `google.api.http` path templates (AIP-127): `/v1/{name=shelves/*}/books/{book}:verb`.
 *
 *     Template = "/" Segments [ Verb ] ;   Segment = "*" | "**" | LITERAL | Variable ;
 *     Variable = "{" FieldPath [ "=" Segments ] "}" ;   Verb = ":" LITERAL ;
 *
 * A custom verb is the text after the last `:` of the last path segment, so `{name}` never swallows
 * `:plan`. Variable values are percent-decoded; a multi-segment (`**` or `a/*`) value keeps its `/`.
 */

/** One segment pattern: a literal, `*` (one segment) or `**` (the rest, at least zero segments). */
type SegmentPattern = { readonly literal: string } | { readonly wildcard: '*' | '**' };

/** A piece of a template: a fixed segment pattern, or a variable bound to a request field. */
type Piece = { readonly kind: 'segment'; readonly pattern: SegmentPattern } | { readonly kind: 'variable'; readonly fieldPath: string; readonly patterns: readonly SegmentPattern[] };

/** A parsed path template. */
export interface PathTemplate {
  /** The template as written. */
  readonly source: string;
  readonly pieces: readonly Piece[];
  /** The custom verb without `:`, or undefined. */
  readonly verb?: string;
  /** The request field paths the template binds, in order. */
  readonly fieldPaths: readonly string[];
}

function segmentPattern(text: string, template: string): SegmentPattern {
  if (text === '*' || text === '**') return { wildcard: text };
  if (!text || /[{}=*]/.test(text)) throw new Error(`path template ${template}: invalid segment ${JSON.stringify(text)}`);
  return { literal: text };
}

/** Parses a template; throws naming the template when it is malformed. */
export function parsePathTemplate(template: string): PathTemplate {
  if (!template.startsWith('/')) throw new Error(`path template ${template}: must start with /`);
  let body = template.slice(1);
  let verb: string | undefined;
  const lastSlash = body.lastIndexOf('/');
  const lastClose = body.lastIndexOf('}');
  const colon = body.lastIndexOf(':');
  if (colon > lastSlash && colon > lastClose) {
    verb = body.slice(colon + 1);
    body = body.slice(0, colon);
    if (!verb) throw new Error(`path template ${template}: empty custom verb`);
  }
  const pieces: Piece[] = [];
  const fieldPaths: string[] = [];
  let i = 0;
  while (i < body.length) {
    if (body[i] === '{') {
      const close = body.indexOf('}', i);
      if (close < 0) throw new Error(`path template ${template}: unclosed {`);
      const inner = body.slice(i + 1, close);
      const eq = inner.indexOf('=');
      const fieldPath = eq < 0 ? inner : inner.slice(0, eq);
      if (!/^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/.test(fieldPath)) throw new Error(`path template ${template}: invalid field path ${JSON.stringify(fieldPath)}`);
      const patterns = eq < 0 ? [{ wildcard: '*' as const }] : inner.slice(eq + 1).split('/').map((s) => segmentPattern(s, template));
      pieces.push({ kind: 'variable', fieldPath, patterns });
      fieldPaths.push(fieldPath);
      i = close + 1;
    } else {
      const slash = body.indexOf('/', i);
      const end = slash < 0 ? body.length : slash;
      pieces.push({ kind: 'segment', pattern: segmentPattern(body.slice(i, end), template) });
      i = end;
    }
    if (i < body.length) {
      if (body[i] !== '/') throw new Error(`path template ${template}: expected / at offset ${i + 1}`);
      i++;
    }
  }
  return { source: template, pieces, ...(verb !== undefined ? { verb } : {}), fieldPaths };
}

/** Field path → decoded value of each variable, when `path` (without query) matches; else undefined. */
export function matchPathTemplate(t: PathTemplate, path: string): Map<string, string> | undefined {
  if (!path.startsWith('/')) return undefined;
  let rest = path.slice(1);
  const lastSlash = rest.lastIndexOf('/');
  const colon = rest.lastIndexOf(':');
  let verb: string | undefined;
  if (colon > lastSlash) {
    verb = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
  }
  if (verb !== t.verb) return undefined;
  const segments = rest === '' ? [] : rest.split('/');
  const out = new Map<string, string>();
  let at = 0;
  const take = (p: SegmentPattern, isLast: boolean): string[] | undefined => {
    if ('literal' in p) return segments[at] !== undefined && decode(segments[at]) === p.literal ? segments.slice(at, ++at) : undefined;
    if (p.wildcard === '*') return segments[at] !== undefined && segments[at] !== '' ? segments.slice(at, ++at) : undefined;
    if (!isLast) return undefined;
    const taken = segments.slice(at);
    at = segments.length;
    return taken;
  };
  for (const [index, piece] of t.pieces.entries()) {
    const lastPiece = index === t.pieces.length - 1;
    if (piece.kind === 'segment') {
      if (!take(piece.pattern, lastPiece)) return undefined;
      continue;
    }
    const taken: string[] = [];
    for (const [k, p] of piece.patterns.entries()) {
      const got = take(p, lastPiece && k === piece.patterns.length - 1);
      if (!got) return undefined;
      taken.push(...got);
    }
    const value = taken.length === 1 ? decode(taken[0]) : taken.map(decode).join('/');
    if (value === undefined || value.includes('\u0000')) return undefined;
    out.set(piece.fieldPath, value);
  }
  return at === segments.length ? out : undefined;
}

/**
 * Why a request path cannot be decoded, or undefined when it can: a segment whose percent-escapes
 * are not UTF-8 (`%ff`), malformed (`%zz`) or decode to NUL matches no template, and is a bad request
 * rather than a missing route.
 */
export function undecodablePathSegment(path: string): string | undefined {
  return path.split('/').find((segment) => decode(segment).includes('\u0000'));
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return '\u0000';
  }
}

/** The OpenAPI form of a template: `{field}` per variable (`{name=a/*}` becomes `{name}`), verb kept. */
export function openApiPath(t: PathTemplate): string {
  const parts = t.pieces.map((p) => (p.kind === 'variable' ? `{${p.fieldPath}}` : 'literal' in p.pattern ? p.pattern.literal : p.pattern.wildcard));
  return `/${parts.join('/')}${t.verb !== undefined ? `:${t.verb}` : ''}`;
}
