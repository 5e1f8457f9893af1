/**
 * The committed structural schemas (lib/spec/generated/crd-schemas.ts) are what `npm run import`
 * would write now, from the pinned CRDs (../shared/crds when present, else the cache or the pinned
 * URLs). When this fails, run `npm run import` and commit the file.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { GENERATED_SCHEMAS_PATH, renderSchemaTable } from '../../lib/crds/schema-table';
import { projectRoot } from '../../lib/crds/resolve';

test('the committed schemas are not stale: regenerating them gives the same bytes (else run `npm run import`)', async () => {
  const committed = fs.readFileSync(path.join(projectRoot(), GENERATED_SCHEMAS_PATH), 'utf8');
  const fresh = await renderSchemaTable();
  // Compared by length and a short window at the first difference: the table is one long line.
  const at = [...fresh].findIndex((c, i) => c !== committed[i]);
  const where = at === -1 && fresh.length === committed.length ? null : { at, committed: committed.slice(Math.max(0, at - 40), at + 40), regenerated: fresh.slice(Math.max(0, at - 40), at + 40) };
  expect(where).toBeNull();
});
