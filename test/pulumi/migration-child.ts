/**
 * Runs the Pulumi executor's `update` in a process of its own, so a test can kill it mid-migration
 * (as a killed `pulumi up` kills its provider). Usage: `node --require tsx/cjs migration-child.ts INPUTS.json`;
 * step lines go to stdout, the error (if any) to stderr.
 */
import * as fs from 'node:fs';
import { MigrationInputs } from '../../lib/pulumi/migration-inputs';
import { update } from '../../lib/pulumi/migration-operations';

const inputs = JSON.parse(fs.readFileSync(process.argv[2], 'utf8')) as MigrationInputs;
update({}, inputs).then(
  () => process.exit(0),
  (err: Error) => {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  },
);
