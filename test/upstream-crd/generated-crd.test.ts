/**
 * The committed rayshift CRD (lib/crds/generated/rayshift-rayservice-crd.json) is what
 * `npm run import` would write now: it is re-rendered in memory from the pinned KubeRay CRD
 * (../shared/crds when present, else the cache or the pinned URL) and compared byte for byte.
 * When this fails, run `npm run import` and commit the file.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { GENERATED_RAYSHIFT_CRD_PATH, renderGeneratedRayshiftCrd } from '../../lib/crds/regenerate';
import { projectRoot } from '../../lib/crds/resolve';

const committed = () => fs.readFileSync(path.join(projectRoot(), GENERATED_RAYSHIFT_CRD_PATH), 'utf8');

test('the committed file is not stale: regenerating it gives the same bytes (else run `npm run import`)', async () => {
  // Compared as text, not with toEqual: a diff of two 900 kB objects is unreadable, and the first
  // differing line says enough.
  const fresh = (await renderGeneratedRayshiftCrd()).split('\n');
  const old = committed().split('\n');
  const at = [...Array(Math.max(fresh.length, old.length)).keys()].find((i) => fresh[i] !== old[i]);
  expect(at === undefined ? null : { line: at + 1, committed: old[at], regenerated: fresh[at] }).toBeNull();
});
