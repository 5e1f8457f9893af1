/** What counts as a conflict (lib/engine/write-refusal.ts): the one rule every re-reading writer follows. */
import { isWriteConflict } from '../../lib/engine/write-refusal';

test('409 is a conflict whatever its causes', () => {
  expect(isWriteConflict({ status: 409, fieldCauses: 0 })).toBe(true);
  expect(isWriteConflict({ status: 409, fieldCauses: 2 })).toBe(true);
});

test('422 without field causes (a failed test op) is a conflict; with causes (a schema violation) it is not', () => {
  expect(isWriteConflict({ status: 422, fieldCauses: 0 })).toBe(true);
  expect(isWriteConflict({ status: 422, fieldCauses: 1 })).toBe(false);
});

test('other refusals and no refusal at all are not conflicts', () => {
  for (const status of [400, 403, 404, 410, 500, 503]) expect(isWriteConflict({ status, fieldCauses: 0 })).toBe(false);
  expect(isWriteConflict(undefined)).toBe(false);
});
