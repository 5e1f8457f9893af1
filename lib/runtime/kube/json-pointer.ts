/** RFC 6901 JSON pointers for the JSON patches the executors send. */

/** The pointer to `parts` (`jsonPointer('metadata', 'annotations', 'a/b')` → `/metadata/annotations/a~1b`): `~` → `~0`, `/` → `~1` in each token. */
export function jsonPointer(...parts: readonly (string | number)[]): string {
  return '/' + parts.map((p) => String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
}
