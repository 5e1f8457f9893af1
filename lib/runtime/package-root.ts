/**
 * The root of the rayshift package: the repository in a checkout, `node_modules/rayshift` once
 * installed. The CLI reads its version and the dashboard its files from there.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The nearest folder above this module that holds a `package.json`. */
export function projectRoot(): string {
  let dir = __dirname;
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${__dirname}`);
    dir = parent;
  }
  return dir;
}
