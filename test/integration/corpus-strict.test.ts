/**
 * Upstream's own examples (../shared/corpus: RBG v0.8.0-alpha.5's `examples/`, Gateway API v1.4.0's
 * `examples/standard/`) against a real kube-apiserver holding the newest pinned CRDs, as the oracle
 * of what upstream accepts: every object of a kind rayshift validates is sent as a dry-run create
 * with strict field validation (what `kubectl apply` does), and `rayshift validate` must agree:
 * no error for what the API server accepts, at least one for what it refuses. `rayshift plan` must
 * not fail on any file. Needs `npm run controlplane:build`; skipped in a checkout without
 * ../shared/corpus (its README).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { checkFiles, identity, isForeign, InputDocument } from '../../lib/cli/documents';
import { planCommand } from '../../lib/cli/commands';
import type { Style } from '../../lib/cli/style';
import { projectRoot } from '../../lib/crds/resolve';
import { ControlPlane, startControlPlane, upstreamCrdFiles } from '../support/controlplane';

const CORPUS = path.join(projectRoot(), '..', 'shared', 'corpus');
const SOURCES = ['rbg/v0.8.0-alpha.5/examples', 'gateway-api/v1.4.0/examples/standard'];

/** The resource (plural) of each kind rayshift validates, and whether it is namespaced. */
const RESOURCES: Record<string, { plural: string; namespaced: boolean }> = {
  RayService: { plural: 'rayservices', namespaced: true },
  GatewayClass: { plural: 'gatewayclasses', namespaced: false },
  Gateway: { plural: 'gateways', namespaced: true },
  HTTPRoute: { plural: 'httproutes', namespaced: true },
  GRPCRoute: { plural: 'grpcroutes', namespaced: true },
  RoleBasedGroup: { plural: 'rolebasedgroups', namespaced: true },
  CoordinatedPolicy: { plural: 'coordinatedpolicies', namespaced: true },
  RoleBasedGroupWarmup: { plural: 'rolebasedgroupwarmups', namespaced: true },
};

function yamlFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? yamlFiles(p) : /\.ya?ml$/.test(e.name) ? [p] : [];
  });
}

const present = fs.existsSync(CORPUS);
const suite = present ? describe : describe.skip;

suite('upstream examples: rayshift validate agrees with the API server', () => {
  let cp: ControlPlane;
  const namespaces = new Set<string>();

  beforeAll(async () => {
    cp = await startControlPlane({ crds: await upstreamCrdFiles() });
  }, 300_000);
  afterAll(async () => cp?.stop());

  /** The API server's verdict on a dry-run create with strict field validation: undefined when accepted, else its message. */
  async function serverVerdict(doc: InputDocument): Promise<string | undefined> {
    const { kind, namespace } = identity(doc);
    const { plural, namespaced } = RESOURCES[kind];
    const ns = namespace || 'default';
    if (namespaced && !namespaces.has(ns)) {
      const r = await cp.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
      if (r.status !== 201 && r.status !== 409) throw new Error(`namespace ${ns}: HTTP ${r.status}`);
      namespaces.add(ns);
    }
    const base = `/apis/${String(doc.manifest.apiVersion)}${namespaced ? `/namespaces/${ns}` : ''}/${plural}`;
    const r = await cp.request('POST', `${base}?dryRun=All&fieldValidation=Strict`, doc.manifest);
    if (r.status === 201) return undefined;
    if (r.status === 404) throw new Error(`${base}: not served (is the CRD installed?)`);
    return `HTTP ${r.status}: ${String(r.body?.message)}`;
  }

  test.each(SOURCES)('%s', async (source) => {
    const files = yamlFiles(path.join(CORPUS, source)).sort();
    const counts = { files: files.length, documents: 0, accepted: 0, refused: 0, notValidated: 0, notYaml: 0 };
    const disagreements: string[] = [];
    for (const file of files) {
      // Read raw, so that the server sees the document exactly as upstream wrote it.
      const raw = parseAllDocuments(fs.readFileSync(file, 'utf8'));
      if (raw.some((d) => d.errors.length > 0)) {
        counts.notYaml++;
        // Upstream ships it broken; validate must say so rather than crash.
        expect(checkFiles([file], () => '').problems.some((p) => p.message.startsWith('is not valid YAML'))).toBe(true);
        continue;
      }
      const originals = raw.map((d) => d.toJSON());
      const { documents, problems } = checkFiles([file], () => '');
      for (const doc of documents) {
        counts.documents++;
        if (isForeign(doc) || RESOURCES[identity(doc).kind] === undefined) {
          counts.notValidated++;
          continue;
        }
        const refused = await serverVerdict({ ...doc, manifest: originals[doc.document - 1] });
        const errors = problems.filter((p) => p.document === doc.document && p.severity === 'error').map((p) => `${p.path}: ${p.message}`);
        const where = `${path.relative(CORPUS, file)}:${doc.document} ${identity(doc).kind}/${identity(doc).name}`;
        if (refused === undefined) {
          counts.accepted++;
          if (errors.length > 0) disagreements.push(`${where}: the API server accepts it, rayshift says ${JSON.stringify(errors)}`);
        } else {
          counts.refused++;
          if (errors.length === 0) disagreements.push(`${where}: the API server refuses it (${refused}), rayshift finds no error`);
        }
      }
      // plan must not fail on anything validate accepts, nor crash on what it refuses.
      const out: string[] = [];
      const code = planCommand([file], true, { out: (t) => out.push(t), err: (t) => out.push(t), outStyle: plain, errStyle: plain });
      expect([0, 1]).toContain(code);
      expect(() => JSON.parse(out.join(''))).not.toThrow();
    }
    // eslint-disable-next-line no-console
    console.log(`${source}: ${JSON.stringify(counts)}`);
    expect(disagreements).toEqual([]);
    expect(counts.accepted).toBeGreaterThan(0);
  }, 300_000);
});

/** No colours in captured output. */
const same = (s: string) => s;
const plain: Style = { red: same, green: same, yellow: same, bold: same, dim: same };
