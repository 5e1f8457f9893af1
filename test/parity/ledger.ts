/**
 * The parity suite's bookkeeping. Every case of an upstream test table (KubeRay v1.7.0, RBG
 * v0.7.0 / v0.8.0-alpha.5) is ported as a row naming its Go test and case; a row whose outcome in
 * rayshift deliberately differs names the row of README.md's table "Where rayshift is stricter or
 * different, and why" that explains it. The case tests assert rayshift's outcome either way, so a
 * marked difference that became the same fails as surely as an unmarked one that differs.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** One ported case of an upstream test. */
export interface UpstreamCase {
  /** The Go test function (and, for generated cases, the loop) the case comes from. */
  readonly test: string;
  /** The case's name in the Go table (or a description of an inline assertion). */
  readonly name: string;
  /**
   * The first cell of the README row explaining why rayshift's outcome differs, when it does
   * deliberately; absent when rayshift's outcome is upstream's.
   */
  readonly difference?: string;
}

/** An upstream test this suite does not port, with how many cases it has and why. */
export interface NotPorted {
  readonly test: string;
  readonly cases: number;
  readonly reason: string;
}

/** Counts of one table's cases by outcome. */
export interface Tally {
  /** Cases whose outcome in rayshift is upstream's. */
  readonly same: number;
  /** Cases where rayshift deliberately differs, each with a README row. */
  readonly different: number;
}

/** Counts `cases` by outcome. */
export function tally(cases: readonly UpstreamCase[]): Tally {
  const different = cases.filter((c) => c.difference !== undefined).length;
  return { same: cases.length - different, different };
}

const README = path.join(__dirname, '..', '..', 'README.md');
const HEADING = '**Where rayshift is stricter or different, and why.**';

/** First cells of the rows of README.md's "Where rayshift is stricter or different, and why" table. */
export function readmeDifferenceRules(): string[] {
  const lines = fs.readFileSync(README, 'utf8').split('\n');
  const start = lines.findIndex((l) => l.startsWith(HEADING));
  if (start < 0) throw new Error(`README.md has no paragraph starting ${HEADING}`);
  const header = lines.findIndex((l, i) => i > start && l.startsWith('| rule |'));
  const rows: string[] = [];
  for (let i = header + 2; i < lines.length && lines[i].startsWith('|'); i++) rows.push(lines[i].split('|')[1].trim());
  return rows;
}

/** Fails unless `difference` is the first cell of a row of README's differences table. */
export function expectDocumented(difference: string): void {
  expect(readmeDifferenceRules()).toContain(difference);
}

/** A case's label for test titles: `Test › case`. */
export function label(c: UpstreamCase): string {
  return `${c.test} › ${c.name}`;
}

/**
 * The README rows the suite's deliberate differences cite (first cells of README.md's table
 * "Where rayshift is stricter or different, and why").
 */
export const DIFFERENCES = {
  workerGroups: 'worker `groupName`, `replicas`',
  passedThrough: 'RayCluster fields rayshift passes through',
  featureGated: 'feature-gated RayCluster fields',
  capacityMoves: 'capacity moves (engine)',
  routeFirst: 'traffic onto a route not yet in place (engine)',
  partitionKeepsAll: 'RBG partition keeping every replica',
  rbgOutOfRange: 'RBG partition outside 0 to 100 %',
  roleInTwoRules: 'RBG role in two rules',
} as const;
