/**
 * The props a JavaScript caller gave, or none: TypeScript and Python require props, but plain
 * JavaScript can leave them out, and validation at synthesis should then name each missing field
 * (`spec.rayClusterConfig: is required`) instead of the constructor failing on `undefined`.
 */
export function givenProps<T extends object>(props: T | undefined): T {
  return props ?? ({} as T);
}
