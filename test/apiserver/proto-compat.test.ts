/**
 * The published wire (binary and JSON) of proto/ stays compatible: `buf breaking` (buf.yaml's
 * WIRE_JSON rules, offline) against the proto of the last commit, and the check's teeth: a field
 * deleted without reserving its number and name is refused, while field 8 of `UpgradeStatus`
 * (`next_step_time`, deleted and reserved) passes against the proto that still had it.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { projectRoot } from '../../lib/crds/resolve';

const root = projectRoot();
const buf = path.join(root, 'node_modules', '.bin', 'buf');
const UPGRADE_PROTO = path.join('proto', 'rayshift', 'v1', 'upgrade.proto');
const RESERVED_8 = '  reserved 8;\n  reserved "next_step_time";\n';

let tmp: string;
beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rayshift-proto-'));
});
afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** A buf workspace under `tmp/name`: the repository's buf.yaml and proto/, with upgrade.proto's text edited by `edit`. */
function workspace(name: string, edit: (upgradeProto: string) => string): string {
  const dir = path.join(tmp, name);
  fs.cpSync(path.join(root, 'proto'), path.join(dir, 'proto'), { recursive: true });
  fs.copyFileSync(path.join(root, 'buf.yaml'), path.join(dir, 'buf.yaml'));
  const file = path.join(dir, UPGRADE_PROTO);
  fs.writeFileSync(file, edit(fs.readFileSync(file, 'utf8')));
  return dir;
}

/** `buf breaking` of `input` against `against`: its exit status and what it printed. */
function breaking(input: string, against: string): { status: number; output: string } {
  try {
    execFileSync(buf, ['breaking', input, '--against', against], { cwd: input, stdio: 'pipe', timeout: 60_000 });
    return { status: 0, output: '' };
  } catch (e) {
    const err = e as { status?: number; stdout?: Buffer; stderr?: Buffer };
    return { status: err.status ?? -1, output: `${err.stdout ?? ''}${err.stderr ?? ''}` };
  }
}

/** The current proto with field 8 as it was published before it was deleted. */
const withField8 = (text: string) => {
  expect(text).toContain(RESERVED_8);
  return text.replace(RESERVED_8, '  google.protobuf.Timestamp next_step_time = 8;\n');
};

test('proto/ is wire-compatible with the proto of the last commit', () => {
  const committed = path.join(tmp, 'committed');
  fs.mkdirSync(committed);
  const archive = execFileSync('git', ['archive', 'HEAD', 'proto', 'buf.yaml'], { cwd: root, maxBuffer: 64 * 1024 * 1024 });
  execFileSync('tar', ['-x', '-C', committed], { input: archive });
  expect(breaking(root, committed)).toEqual({ status: 0, output: '' });
}, 120_000);

test('field 8 of UpgradeStatus, reserved by number and name, passes against the proto that had it', () => {
  expect(breaking(root, workspace('published', withField8))).toEqual({ status: 0, output: '' });
}, 120_000);

test('a field deleted without reserving its number and name is refused, naming both', () => {
  const published = workspace('published', withField8);
  const unreserved = workspace('unreserved', (text) => text.replace(RESERVED_8, ''));
  const { status, output } = breaking(unreserved, published);
  expect(status).not.toBe(0);
  expect(output).toContain('Previously present field "8" with name "next_step_time" on message "UpgradeStatus" was deleted without reserving the number "8".');
  expect(output).toContain('was deleted without reserving the name "next_step_time".');
}, 120_000);
