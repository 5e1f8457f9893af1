/**
 * Regenerates everything derived from upstream CRDs, offline when `../shared/crds` is present (every
 * URL resolves to its shared copy or a cached download), so that synthesis never needs them:
 * - `imports/` with `cdk8s import` from the CRDs pinned in `cdk8s.yaml`. The CRDs of one entry are
 *   concatenated into one multi-document file, because `cdk8s import` writes one file per API group
 *   and a second call for the same group would overwrite the first.
 * - the rayshift CRD, built from the newest supported KubeRay, into `lib/crds/generated/`.
 * - the compacted structural schemas of every kind rayshift validates (after the rayshift CRD, which
 *   is one of them), into `lib/spec/generated/crd-schemas.ts`.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse } from 'yaml';
import { crdOfUrl } from '../lib/crds/catalog';
import { GENERATED_RAYSHIFT_CRD_PATH, renderGeneratedRayshiftCrd } from '../lib/crds/regenerate';
import { projectRoot, resolveCrdFile } from '../lib/crds/resolve';
import { GENERATED_SCHEMAS_PATH, renderSchemaTable } from '../lib/crds/schema-table';

async function main(): Promise<void> {
  const root = projectRoot();
  const config = parse(fs.readFileSync(path.join(root, 'cdk8s.yaml'), 'utf8')) as { imports: string[] };
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'rayshift-import-'));
  const cli = path.join(root, 'node_modules', '.bin', 'cdk8s');
  try {
    for (const entry of config.imports) {
      const [prefix, urls] = entry.split(':=');
      const files: string[] = [];
      for (const url of urls.split(',')) {
        const crd = crdOfUrl(url);
        if (!crd) throw new Error(`cdk8s.yaml: ${url} is not a pinned CRD URL (see lib/crds/catalog.ts)`);
        files.push(await resolveCrdFile(crd));
      }
      const combined = path.join(work, `${prefix}.yaml`);
      fs.writeFileSync(combined, files.map((f) => `${fs.readFileSync(f, 'utf8').trimEnd()}\n---\n`).join(''));
      process.stdout.write(`importing ${prefix} from ${files.length} CRD file(s)\n`);
      execFileSync(
        cli,
        ['import', `${prefix}:=${combined}`, '--language', 'typescript', '--output', 'imports', '--no-save', '--no-check-upgrade'],
        { cwd: root, stdio: 'inherit' },
      );
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  process.stdout.write(`writing ${GENERATED_RAYSHIFT_CRD_PATH}\n`);
  fs.writeFileSync(path.join(root, GENERATED_RAYSHIFT_CRD_PATH), await renderGeneratedRayshiftCrd());
  process.stdout.write(`writing ${GENERATED_SCHEMAS_PATH}\n`);
  fs.writeFileSync(path.join(root, GENERATED_SCHEMAS_PATH), await renderSchemaTable());
}

main().catch((err: Error) => {
  process.stderr.write(`import failed: ${err.message}\n`);
  process.exit(1);
});
