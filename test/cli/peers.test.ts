/** Which subcommand needs which optional peer dependency, and the error when one is missing (in this process, with an injected lookup). */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { OPTIONAL_PEERS } from '../../lib/cli/peers';
import { fixture, rayshiftIn } from './cli-io';

/** The ranges the package's peerDependencies give (what the CLI must name). */
const PEER = (JSON.parse(fs.readFileSync(path.join(__dirname, '../../package.json'), 'utf8')) as { peerDependencies: Record<string, string> }).peerDependencies;

const without = (...missing: string[]) => (pkg: string) => !missing.includes(pkg);

test('a subcommand whose package is missing prints one error naming it and its range, and exits 1 before it starts', async () => {
  expect(await rayshiftIn(['status', 'llm'], { installed: without('@kubernetes/client-node') })).toEqual({
    code: 1,
    stdout: '',
    stderr: `error: rayshift status needs @kubernetes/client-node, an optional peer dependency: npm install @kubernetes/client-node@${PEER["@kubernetes/client-node"]}\n`,
  });
  expect((await rayshiftIn(['abort', 'llm'], { installed: without('@kubernetes/client-node') })).stderr).toContain('rayshift abort needs @kubernetes/client-node,');
  expect((await rayshiftIn(['get', 'rayservices'], { installed: without('@kubernetes/client-node') })).stderr).toContain('rayshift get needs @kubernetes/client-node,');
});

test('--api-server needs the API client packages instead of @kubernetes/client-node', async () => {
  const r = await rayshiftIn(['pause', 'llm', '--api-server', 'https://127.0.0.1:1'], { installed: without('@connectrpc/connect-node', '@bufbuild/protobuf', '@kubernetes/client-node') });
  expect(r).toEqual({
    code: 1,
    stdout: '',
    stderr: `error: rayshift pause needs @connectrpc/connect-node, @bufbuild/protobuf, optional peer dependencies: npm install @connectrpc/connect-node@${PEER["@connectrpc/connect-node"]} @bufbuild/protobuf@${PEER["@bufbuild/protobuf"]}\n`,
  });
});

test('api-server and operator need every optional package', async () => {
  for (const verb of ['api-server', 'operator']) {
    const r = await rayshiftIn([verb], { installed: () => false });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`error: rayshift ${verb} needs ${Object.keys(OPTIONAL_PEERS).join(', ')}, optional peer dependencies: npm install ${Object.entries(OPTIONAL_PEERS).map(([p, v]) => `${p}@${v}`).join(' ')}\n`);
  }
});

test('validate, plan and --help need none of them', async () => {
  const none = { installed: () => false };
  expect((await rayshiftIn(['validate', fixture('good.yaml')], none)).code).toBe(0);
  expect((await rayshiftIn(['plan', fixture('good.yaml')], none)).code).toBe(0);
  const help = await rayshiftIn(['--help'], none);
  expect(help.code).toBe(0);
  const words = help.stdout.replace(/\s+/g, ' ');
  expect(words).toContain(`status, get and the steering verbs: @kubernetes/client-node ${PEER["@kubernetes/client-node"]}; with --api-server instead @connectrpc/connect, @connectrpc/connect-node, @bufbuild/protobuf`);
  expect(words).toContain(`api-server, operator: @kubernetes/client-node ${PEER["@kubernetes/client-node"]}, @connectrpc/connect ${PEER["@connectrpc/connect"]}, @connectrpc/connect-node ${PEER["@connectrpc/connect-node"]}, @bufbuild/protobuf ${PEER["@bufbuild/protobuf"]}, pino ${PEER["pino"]}, prom-client ${PEER["prom-client"]}`);
});
