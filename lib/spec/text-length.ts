/**
 * Lengths of a string as the limits and the API server count them, walked over its UTF-16 units
 * without building an array or a Buffer (lib/spec runs without Node's Buffer in jsii hosts too, and
 * `[...text]` of a 2.6 MB Serve config took 300-600 ms and tens of MB).
 */

/** The length of `text` in code points, as Kubernetes counts a string's length (a lone surrogate is one). */
export function codePointLength(text: string): number {
  let n = text.length;
  for (let i = 0; i < text.length - 1; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

/** The UTF-8 length of `text`. */
export function utf8Length(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}
