/**
 * The generated Helm chart (charts/rayshift) through a real helm (scripts/build-helm.sh, v3.22.0
 * from Go modules): it lints, and `helm template` with a set of values renders exactly what the
 * cdk8s install chart (its source) synthesizes with the same settings, CRD and Namespace aside
 * (the CRD is in crds/, the namespace is the release's); bad values fail naming the value. The
 * chart installed, upgraded and uninstalled on the test cluster: cluster-helm-chart.test.ts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Testing } from 'cdk8s';
import { k8s } from 'cdk8s-plus-28';
import { parseAllDocuments } from 'yaml';
import { OPERATOR_NAMESPACE, OperatorChart, OperatorChartProps } from '../../operator/chart/operator-chart';
import { CHART_DIR, Helm, startHelm } from '../support/helm';

let helm: Helm;
const version = JSON.parse(fs.readFileSync(path.join(CHART_DIR, '..', '..', 'package.json'), 'utf8')).version as string;

beforeAll(() => {
  helm = startHelm();
}, 1_800_000);

afterAll(() => helm?.cleanup());

type Doc = { kind: string; metadata: { name: string; namespace?: string } };
const key = (d: Doc) => `${d.kind}/${d.metadata.namespace ?? ''}/${d.metadata.name}`;
const byKey = (docs: Doc[]) => Object.fromEntries(docs.map((d) => [key(d), d]));

function template(values: unknown, ...more: string[]): Doc[] {
  const out = helm.run(['template', 'rayshift', CHART_DIR, '--namespace', OPERATOR_NAMESPACE, '-f', helm.valuesFile('t', values), ...more]);
  return parseAllDocuments(out).map((d) => d.toJS()).filter((d): d is Doc => d !== null);
}

function cdk8s(props: OperatorChartProps): Doc[] {
  return (Testing.synth(new OperatorChart(Testing.app(), 'rayshift-operator', props)) as Doc[]).filter((d) => d.kind !== 'CustomResourceDefinition' && d.kind !== 'Namespace');
}

test('helm lint passes, with the defaults and with the example values (API server on, --strict)', () => {
  expect(helm.run(['lint', CHART_DIR])).toContain('1 chart(s) linted, 0 chart(s) failed');
  const example = path.join(CHART_DIR, '..', '..', 'examples', 'helm', 'values-api-server.yaml');
  expect(helm.run(['lint', '--strict', CHART_DIR, '-f', example])).toContain('1 chart(s) linted, 0 chart(s) failed');
  const docs = helm.run(['template', 'rayshift', CHART_DIR, '-f', example]);
  expect(docs).toContain('name: rayshift-api-server:impersonator');
  expect(docs).toContain('- "http://{cluster}-head-svc.{namespace}.svc.cluster.local:8265"');
});

test('the defaults render the cdk8s chart without props: image ghcr.io/rayshift/rayshift:<package version>, 2 replicas, no API server', () => {
  const docs = template({});
  expect(byKey(docs)).toEqual(byKey(cdk8s({})));
  const deployment = docs.find((d) => d.kind === 'Deployment') as unknown as { spec: { replicas: number; template: { spec: { containers: { image: string }[] } } } };
  expect(deployment.spec.replicas).toBe(2);
  expect(deployment.spec.template.spec.containers[0].image).toBe(`ghcr.io/rayshift/rayshift:${version}`);
  expect(docs.filter((d) => d.metadata.name.startsWith('rayshift-api-server'))).toEqual([]);
});

test.each([
  ['classic', ['ray-token-a', 'ray-token-b'], true, 12],
  ['constrained', [], true, 1],
  ['classic', [], false, 4],
  ['constrained', ['ray-token-a'], false, 1],
] as const)('every value renders as the same cdk8s prop (API server impersonation %s, token Secrets %j, dashboard %s, shards %i)', (impersonation, secrets, dashboard, shards) => {
  const resources = { requests: { cpu: '250m', memory: '200Mi' }, limits: { cpu: '2', memory: '1Gi' } };
  const apiResources = { requests: { cpu: '50m', memory: '100M' }, limits: { cpu: '1', memory: '300M' } };
  const q = k8s.Quantity.fromString;
  const extraArgs = ['--dashboard-address-template', 'http://{cluster}-head-svc.{namespace}.svc:8265'];
  const docs = template({
    image: { repository: 'registry.example/team/rayshift', tag: '9.9.9-rc.1', pullPolicy: 'Always' },
    replicas: 3,
    shards,
    resources,
    extraArgs,
    rbac: { rayTokenAuthSecrets: secrets },
    apiServer: { enabled: true, tlsSecretName: 'api-tls', port: 9443, replicas: 1, resources: apiResources, impersonation, dashboard },
  });
  const expected = cdk8s({
    image: 'registry.example/team/rayshift:9.9.9-rc.1',
    imagePullPolicy: 'Always',
    replicas: 3,
    shards,
    resources: { requests: { cpu: q('250m'), memory: q('200Mi') }, limits: { cpu: q('2'), memory: q('1Gi') } },
    extraArgs,
    ...(secrets.length > 0 ? { rayTokenAuth: { secretNames: secrets } } : {}),
    apiServer: { tlsSecretName: 'api-tls', port: 9443, replicas: 1, resources: { requests: { cpu: q('50m'), memory: q('100M') }, limits: { cpu: q('1'), memory: q('300M') } }, impersonation, dashboard },
  });
  expect(byKey(docs)).toEqual(byKey(JSON.parse(JSON.stringify(expected))));
  // The release namespace is every namespaced object's, and the admission policy's subject.
  expect(helm.run(['template', 'x', CHART_DIR, '--namespace', 'ops-a'])).toContain("request.userInfo.username == 'system:serviceaccount:ops-a:rayshift-operator'");
});

test.each([
  ['256Mi', 128],
  ['1Gi', 512],
  ['300M', 143],
  ['268435456', 128],
  ['1.5Gi', 768],
])('a memory limit of %s gives Node an old space of %i MiB in both containers, as the cdk8s chart does', (memory, oldSpaceMiB) => {
  // Every field given: helm merges a partial `resources` into the defaults.
  const resources = { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '1', memory } };
  const docs = template({ resources, apiServer: { enabled: true, tlsSecretName: 'api-tls', resources } });
  const nodeOptions = docs.filter((d) => d.kind === 'Deployment').map((d) => (d as unknown as { spec: { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } } }).spec.template.spec.containers[0].env.find((e) => e.name === 'NODE_OPTIONS')?.value);
  expect(nodeOptions).toEqual([`--max-old-space-size=${oldSpaceMiB} --max-semi-space-size=2`, `--max-old-space-size=${oldSpaceMiB} --max-semi-space-size=2`]);
  const q = k8s.Quantity.fromString;
  const props = { requests: { cpu: q('100m'), memory: q('64Mi') }, limits: { cpu: q('1'), memory: q(memory) } };
  expect(byKey(docs)).toEqual(byKey(JSON.parse(JSON.stringify(cdk8s({ resources: props, apiServer: { tlsSecretName: 'api-tls', resources: props } })))));
});

test('bad values fail, naming the value', () => {
  expect(helm.fail(['template', 'x', CHART_DIR, '--set', 'resources.limits.memory=lots'])).toContain('resources.limits.memory: "lots" is not a memory quantity the chart reads (e.g. 256Mi, 1Gi, 300M)');
  expect(helm.fail(['template', 'x', CHART_DIR, '--set', 'resources.limits.memory=null'])).toContain("at '/resources/limits': missing property 'memory'");
  expect(helm.fail(['template', 'x', CHART_DIR, '--set', 'apiServer.enabled=true'])).toContain('apiServer.tlsSecretName: the name of a kubernetes.io/tls Secret is required when apiServer.enabled is true');
  expect(helm.fail(['template', 'x', CHART_DIR, '--set', 'apiServer.impersonation=sudo'])).toContain("at '/apiServer/impersonation': value must be one of 'classic', 'constrained'");
  expect(helm.fail(['template', 'x', CHART_DIR, '--set', 'replicas=0'])).toContain("at '/replicas': minimum: got 0, want 1");
  expect(helm.fail(['template', 'x', CHART_DIR, '--set', 'shards=0'])).toContain("at '/shards': minimum: got 0, want 1");
  expect(helm.fail(['template', 'x', CHART_DIR, '--set', 'apiServer.port=70000'])).toContain("at '/apiServer/port': maximum: got 70,000, want 65,535");
  expect(helm.fail(['template', 'x', CHART_DIR, '--set', 'image.pullPolicy=Sometimes'])).toContain("at '/image/pullPolicy': value must be one of 'Always', 'IfNotPresent', 'Never'");
  expect(helm.fail(['template', 'x', CHART_DIR, '--set', 'replica=3'])).toContain("additional properties 'replica' not allowed");
});

test('helm package makes rayshift-<version>.tgz, which renders like the folder', () => {
  const dir = path.dirname(helm.valuesFile('pkg', {}));
  helm.run(['package', CHART_DIR, '--destination', dir]);
  const tgz = path.join(dir, `rayshift-${version}.tgz`);
  expect(fs.statSync(tgz).size).toBeGreaterThan(0);
  expect(helm.run(['template', 'rayshift', tgz, '--namespace', OPERATOR_NAMESPACE])).toBe(helm.run(['template', 'rayshift', CHART_DIR, '--namespace', OPERATOR_NAMESPACE]));
  expect(helm.run(['show', 'crds', tgz])).toContain('name: rayservices.rayshift.dev');
});
