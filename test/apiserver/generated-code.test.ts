/** The committed generated code (lib/apiserver/gen) is what scripts/generate-api.sh makes from proto/ today. */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { projectRoot } from '../../lib/crds/resolve';

function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => fs.statSync(path.join(dir, f)).isFile()).sort();
}

test('regenerating from proto/ reproduces lib/apiserver/gen byte for byte', () => {
  const root = projectRoot();
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'rayshift-gen-'));
  try {
    execFileSync('bash', [path.join(root, 'scripts', 'generate-api.sh'), out], { cwd: root, stdio: 'pipe', timeout: 120_000 });
    const committed = path.join(root, 'lib', 'apiserver', 'gen');
    const fresh = path.join(out, 'lib', 'apiserver', 'gen');
    expect(filesUnder(fresh)).toEqual(filesUnder(committed));
    for (const f of filesUnder(fresh)) {
      expect({ file: f, text: fs.readFileSync(path.join(committed, f), 'utf8') }).toEqual({ file: f, text: fs.readFileSync(path.join(fresh, f), 'utf8') });
    }
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
}, 180_000);
