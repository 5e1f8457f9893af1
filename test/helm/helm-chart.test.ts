/**
 * The Helm chart (charts/rayshift) is what scripts/helm-chart.ts generates from the cdk8s install
 * chart, and its placeholders become the template expressions they stand for. A real helm lints,
 * renders and installs it in test/integration/helm-chart.test.ts and cluster-helm-chart.test.ts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { projectRoot } from '../../lib/crds/resolve';
import { renderHelmChart, substitute } from '../../scripts/helm-chart';

const chartDir = path.join(projectRoot(), 'charts', 'rayshift');

function filesUnder(dir: string, base = dir): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(path.join(dir, e.name), base) : [path.relative(base, path.join(dir, e.name))]));
}

test('the committed chart is what the cdk8s chart generates (run `npm run chart:helm` after changing operator/chart or the package version)', () => {
  const rendered = renderHelmChart();
  expect(filesUnder(chartDir).sort()).toEqual([...rendered.keys()].sort());
  for (const [file, text] of rendered) expect({ file, text: fs.readFileSync(path.join(chartDir, file), 'utf8') }).toEqual({ file, text });
}, 60_000);

test('the chart version and appVersion are the package version, and no placeholder is left', () => {
  const version = JSON.parse(fs.readFileSync(path.join(projectRoot(), 'package.json'), 'utf8')).version;
  const chart = fs.readFileSync(path.join(chartDir, 'Chart.yaml'), 'utf8');
  expect(chart).toContain(`\nversion: ${version}\n`);
  expect(chart).toContain(`\nappVersion: ${version}\n`);
  for (const f of filesUnder(chartDir)) expect({ f, token: fs.readFileSync(path.join(chartDir, f), 'utf8').includes('RAYSHIFTHELM') }).toEqual({ f, token: false });
});

test('the CRD is in crds/ (installed before the templates, never upgraded or deleted by helm) and no template holds one', () => {
  expect(fs.readdirSync(path.join(chartDir, 'crds'))).toEqual(['rayservices.rayshift.dev.yaml']);
  for (const f of fs.readdirSync(path.join(chartDir, 'templates'))) expect(fs.readFileSync(path.join(chartDir, 'templates', f), 'utf8')).not.toContain('kind: CustomResourceDefinition');
});

describe('substitute', () => {
  test('a whole scalar: strings quoted, integers not', () => {
    expect(substitute('  namespace: RAYSHIFTHELMnamespace\n  replicas: RAYSHIFTHELMreplicas')).toBe('  namespace: {{ .Release.Namespace | quote }}\n  replicas: {{ .Values.replicas }}');
    expect(substitute('- RAYSHIFTHELMpullPolicy')).toBe('- {{ .Values.image.pullPolicy | quote }}');
    expect(substitute('  - image: RAYSHIFTHELMimage')).toBe('  - image: {{ printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) | quote }}');
  });

  test('inside a string: the bare expression', () => {
    expect(substitute("    - expression: user == 'system:serviceaccount:RAYSHIFTHELMnamespace:op'")).toBe("    - expression: user == 'system:serviceaccount:{{ .Release.Namespace }}:op'");
    expect(substitute('    - :RAYSHIFTHELMapiServerPort')).toBe('    - :{{ .Values.apiServer.port }}');
  });

  test('a list item: one quoted item per value; an object: toYaml indented under its key', () => {
    expect(substitute('  args:\n    - operator\n    - RAYSHIFTHELMextraArgs')).toBe('  args:\n    - operator\n    {{- range .Values.extraArgs }}\n    - {{ . | quote }}\n    {{- end }}');
    expect(substitute('      resources: RAYSHIFTHELMresources')).toBe('      resources: {{- toYaml .Values.resources | nindent 8 }}');
    expect(substitute('  - resources: RAYSHIFTHELMresources')).toBe('  - resources: {{- toYaml .Values.resources | nindent 6 }}');
  });

  test('refuses an unknown token, and a list or object inside a string', () => {
    expect(() => substitute('x: RAYSHIFTHELMnope')).toThrow('unknown token RAYSHIFTHELMnope; known: namespace, image');
    expect(() => substitute('x: a-RAYSHIFTHELMextraArgs')).toThrow('extraArgs can only stand alone');
    expect(() => substitute('x: RAYSHIFTHELMextraArgs')).toThrow('list value extraArgs must be a list item');
    expect(() => substitute('- RAYSHIFTHELMresources')).toThrow('object value resources must be a mapping\'s value');
  });
});
