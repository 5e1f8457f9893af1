/**
 * Writes the Helm chart of the operator (`charts/rayshift/`) from the cdk8s install chart
 * (`OperatorChart`, operator/chart/): one source, no hand-copied YAML. Run with
 * `npm run chart:helm`; test/chart/helm-chart.test.ts fails when the committed chart is stale.
 *
 * cdk8s-cli's `synth --format helm` (v2.207) only copies static manifests into `templates/` and takes
 * `crds/` from cdk8s.yaml's imports (the upstream CRDs), so it cannot give a chart with values.
 * Here the construct is synthesized with a placeholder token in each prop a value sets; each
 * token is then replaced in the YAML by its template expression (a whole scalar, text inside a
 * string, a list or an object). Props that add or change whole objects (the API server, its
 * impersonation mode, its dashboard, the token Secrets rule) are synthesized once per choice, and the documents
 * that differ are wrapped in `{{- if }}` on the value. The defaults in values.yaml are read from a
 * synthesis without props, so they are the construct's. The CRD goes to `crds/` (Helm installs it
 * before the templates and, as Helm does with `crds/`, never upgrades or deletes it).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { App } from 'cdk8s';
import { Construct } from 'constructs';
import { stringify } from 'yaml';
import { OPERATOR_NAME, OperatorChart, OperatorChartProps } from '../operator/chart/operator-chart';
import { API_SERVER_NAME, API_SERVER_PORT, ImpersonationMode } from '../operator/chart/api-server';
import { RAYSHIFT_IMAGE } from '../operator/chart/component-deployment';
import { MAX_SHARDS } from '../lib/spec/sharding';

type Manifest = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> }; [k: string]: unknown };

/** How a token is written where it stands: as a whole YAML scalar, inside a string, as a list's only item, or as a mapping's value. */
interface Placeholder {
  /** The expression of the value, e.g. `.Values.replicas`. */
  readonly expr: string;
  /** `string` values are quoted where they are a whole scalar; `int`s are not. */
  readonly kind: 'string' | 'int' | 'list' | 'object';
}

/** Every token the chart is synthesized with, by the name inside the token. */
const PLACEHOLDERS: Record<string, Placeholder> = {
  namespace: { expr: '.Release.Namespace', kind: 'string' },
  image: { expr: 'printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion)', kind: 'string' },
  pullPolicy: { expr: '.Values.image.pullPolicy', kind: 'string' },
  replicas: { expr: '.Values.replicas', kind: 'int' },
  shards: { expr: '.Values.shards', kind: 'string' },
  resources: { expr: '.Values.resources', kind: 'object' },
  nodeOptions: { expr: 'include "rayshift.nodeOptions" .Values.resources.limits.memory', kind: 'string' },
  apiServerResources: { expr: '.Values.apiServer.resources', kind: 'object' },
  apiServerNodeOptions: { expr: 'include "rayshift.nodeOptions" .Values.apiServer.resources.limits.memory', kind: 'string' },
  extraArgs: { expr: '.Values.extraArgs', kind: 'list' },
  rayTokenAuthSecrets: { expr: '.Values.rbac.rayTokenAuthSecrets', kind: 'list' },
  apiServerReplicas: { expr: '.Values.apiServer.replicas', kind: 'int' },
  apiServerPort: { expr: '.Values.apiServer.port', kind: 'int' },
  tlsSecretName: { expr: 'required "apiServer.tlsSecretName: the name of a kubernetes.io/tls Secret is required when apiServer.enabled is true" .Values.apiServer.tlsSecretName', kind: 'string' },
};

/** The token of a placeholder, typed as whatever prop it stands in for. */
function token<T = string>(name: keyof typeof PLACEHOLDERS): T {
  return `RAYSHIFTHELM${name}` as unknown as T;
}

function placeholder(name: string): Placeholder {
  const p = PLACEHOLDERS[name];
  if (p === undefined) throw new Error(`unknown token RAYSHIFTHELM${name}; known: ${Object.keys(PLACEHOLDERS).join(', ')}`);
  return p;
}

/** The text with every token replaced by its template expression. */
export function substitute(text: string): string {
  return text.replace(/^( *)((?:- )?(?:[^\n:'"]+: )?)(.*)$/gm, (line, indent: string, lead: string, rest: string) => {
    const whole = /^RAYSHIFTHELM([A-Za-z]+)$/.exec(rest);
    if (whole && lead !== '') {
      const p = placeholder(whole[1]);
      if (p.kind === 'list') {
        if (lead !== '- ') throw new Error(`list value ${whole[1]} must be a list item: ${line}`);
        return `${indent}{{- range ${p.expr} }}\n${indent}- {{ . | quote }}\n${indent}{{- end }}`;
      }
      if (p.kind === 'object') {
        if (!lead.endsWith(': ')) throw new Error(`object value ${whole[1]} must be a mapping's value: ${line}`);
        return `${indent}${lead.trimEnd()} {{- toYaml ${p.expr} | nindent ${indent.length + (lead.startsWith('- ') ? 4 : 2)} }}`;
      }
      return `${indent}${lead}{{ ${p.expr}${p.kind === 'string' ? ' | quote' : ''} }}`;
    }
    return line.replace(/RAYSHIFTHELM([A-Za-z]+)/g, (_, name: string) => {
      const p = placeholder(name);
      if (p.kind === 'list' || p.kind === 'object') throw new Error(`${name} can only stand alone: ${line}`);
      return `{{ ${p.expr} }}`;
    });
  });
}

/** The shard count a sharded choice is synthesized with: any above 1 renders the sharded operator; its argument then becomes the token. */
const SHARDED = 2;

/** The chart's manifests with `props`, split into the operator's and the API server's (the `ApiServer` construct's). */
function synth(props: OperatorChartProps, resourcesToken = false): { operator: Manifest[]; apiServer: Manifest[] } {
  const app = new App({ outdir: fs.mkdtempSync(path.join(os.tmpdir(), 'rayshift-helm-')) });
  const chart = new OperatorChart(app, 'rayshift-operator', props);
  app.synth(); // validates every construct, as `npm run synth` does
  const all = chart.toJson() as Manifest[];
  // The construct renders `resources` field by field (a token in its place, even through a JSON
  // patch, comes out as {}), so the tokens replace each container's rendered resources, and the
  // heap size the construct derives from their memory limit (node-heap.ts; NODE_OPTIONS_TEMPLATE).
  if (resourcesToken) {
    for (const [name, resources, nodeOptions] of [[OPERATOR_NAME, 'resources', 'nodeOptions'], [API_SERVER_NAME, 'apiServerResources', 'apiServerNodeOptions']] as const) {
      const deployment = all.find((m) => m.kind === 'Deployment' && m.metadata.name === name);
      if (deployment === undefined) continue;
      const container = (deployment.spec as { template: { spec: { containers: { resources: unknown; env: { name: string; value?: string }[] }[] } } }).template.spec.containers[0];
      container.resources = token(resources);
      container.env.find((e) => e.name === 'NODE_OPTIONS')!.value = token(nodeOptions);
    }
  }
  // The construct decides from the number whether the operator is sharded, so a sharded choice is
  // synthesized with a count, whose argument then becomes the token.
  if (resourcesToken && props.shards === SHARDED) {
    const deployment = all.find((m) => m.kind === 'Deployment' && m.metadata.name === OPERATOR_NAME)!;
    const args = (deployment.spec as { template: { spec: { containers: { args: string[] }[] } } }).template.spec.containers[0].args;
    args[args.indexOf('--shards') + 1] = token('shards');
  }
  const api = chart.node.tryFindChild('ApiServer') as Construct | undefined;
  const apiNames = new Set((api?.node.findAll() ?? []).map((c) => (c as unknown as { toJson?: () => Manifest }).toJson?.()).filter((m): m is Manifest => m !== undefined).map(key));
  fs.rmSync(app.outdir, { recursive: true, force: true });
  return { operator: all.filter((m) => !apiNames.has(key(m))), apiServer: all.filter((m) => apiNames.has(key(m))) };
}

function key(m: Manifest): string {
  return `${m.kind}/${m.metadata.namespace ?? ''}/${m.metadata.name}`;
}

function yamlOf(m: Manifest): string {
  return stringify(m, { lineWidth: 0 });
}

/**
 * One template for documents synthesized under several choices: a document the same under every
 * choice is written once; one that differs (or is missing under some) is written once per distinct
 * text, under `{{- if }} … {{- else if }} … {{- else }} … {{- end }}` on the conditions of the choices
 * that give that text (joined with `or`). The conditions must exclude each other; the last choice's
 * is `else`, and the text it gives is the `else` branch.
 */
function mergeChoices(choices: readonly { when: string; docs: Manifest[] }[]): string {
  const keys = [...new Set(choices.flatMap((c) => c.docs.map(key)))];
  return keys.map((k) => {
    const texts = choices.map((c) => { const d = c.docs.find((m) => key(m) === k); return d === undefined ? '' : `---\n${yamlOf(d)}`; });
    if (texts.every((t) => t === texts[0])) return texts[0];
    const elseText = texts[texts.length - 1];
    const others = [...new Set(texts.filter((t) => t !== elseText))];
    const branches = others.map((text, i) => {
      const conditions = choices.filter((_, j) => texts[j] === text).map((c) => c.when);
      const cond = conditions.length === 1 ? conditions[0] : `or ${conditions.map((c) => `(${c})`).join(' ')}`;
      return `${i === 0 ? '{{- if' : '{{- else if'} ${cond} }}\n${text}`;
    });
    return `${branches.join('')}{{- else }}\n${elseText}{{- end }}\n`;
  }).join('');
}

/** Props common to every synthesis: every value a token. */
function tokenProps(impersonation: ImpersonationMode, secrets: boolean, dashboard = true, sharded = false): OperatorChartProps {
  return {
    ...(sharded ? { shards: SHARDED } : {}),
    operatorNamespace: token('namespace'),
    createNamespace: false,
    image: token('image'),
    imagePullPolicy: token('pullPolicy'),
    replicas: token<number>('replicas'),
    extraArgs: [token('extraArgs')],
    ...(secrets ? { rayTokenAuth: { secretNames: [token('rayTokenAuthSecrets')] } } : {}),
    apiServer: { tlsSecretName: token('tlsSecretName'), replicas: token<number>('apiServerReplicas'), port: token<number>('apiServerPort'), impersonation, dashboard },
  };
}

/** The values.yaml defaults, read from the construct's own defaults. */
function defaultValues(): Record<string, unknown> {
  const { operator, apiServer } = synth({ apiServer: { tlsSecretName: 'unused' } });
  const container = (m: Manifest) => (m.spec as { template: { spec: { containers: (Record<string, unknown> & { args: string[] })[] } } }).template.spec.containers[0];
  const deployment = (docs: Manifest[], name: string) => docs.find((m) => m.kind === 'Deployment' && m.metadata.name === name)!;
  const op = deployment(operator, OPERATOR_NAME);
  const api = deployment(apiServer, API_SERVER_NAME);
  const [repository, tag] = [RAYSHIFT_IMAGE.slice(0, RAYSHIFT_IMAGE.lastIndexOf(':')), RAYSHIFT_IMAGE.slice(RAYSHIFT_IMAGE.lastIndexOf(':') + 1)];
  const pkgVersion = packageVersion();
  return {
    image: { repository, tag: tag === pkgVersion ? '' : tag, pullPolicy: container(op).imagePullPolicy },
    replicas: (op.spec as { replicas: number }).replicas,
    shards: 1,
    resources: container(op).resources,
    extraArgs: [],
    rbac: { rayTokenAuthSecrets: [] },
    apiServer: { enabled: false, tlsSecretName: '', port: API_SERVER_PORT, replicas: (api.spec as { replicas: number }).replicas, resources: container(api).resources, impersonation: 'classic', dashboard: !container(api).args.includes('--no-dashboard') },
  };
}

const VALUES_DOC = `# Values of the rayshift chart (generated by scripts/helm-chart.ts from operator/chart; the defaults are
# the cdk8s chart's). One release per cluster: the ClusterRoles and the admission policy have fixed names.
#
# image:        the operator's (and the API server's) image; tag "" is the chart's appVersion.
# replicas:     operator replicas; with one shard one leads (Lease), the others stand by.
# shards:       above 1, the services are hashed into this many shards and every replica works on
#               the shards it holds (one Lease each; docs/sharding.md), e.g. 4 × replicas.
# resources:    the operator container's requests and limits; limits.memory is required and sizes
#               Node's heap (old space half the limit: NODE_OPTIONS).
# extraArgs:    arguments after \`rayshift operator --leader-elect\` (e.g. --dashboard-address-template).
# rbac.rayTokenAuthSecrets: Secrets (by name) the operator may read for RayClusters with Ray token auth.
# apiServer:    the core API server (gRPC, Connect, REST and the dashboard under /ui/), off by default;
#               tlsSecretName names a kubernetes.io/tls Secret in the release namespace (required when
#               enabled); resources as the operator's; impersonation is its RBAC mode: classic or constrained (KEP-5284); dashboard
#               false serves the API alone (\`api-server --no-dashboard\`).
`;

/** JSON schema of the values: helm lint/install/upgrade refuse others, naming the field. */
function valuesSchema(): Record<string, unknown> {
  const str = { type: 'string' };
  // A memory limit is required: Node's heap is sized from it (rayshift.nodeOptions).
  const resources = { type: 'object', additionalProperties: false, required: ['limits'], properties: { requests: { type: 'object' }, limits: { type: 'object', required: ['memory'] }, claims: { type: 'array' } } };
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    additionalProperties: false,
    required: ['image', 'replicas', 'shards', 'resources', 'extraArgs', 'rbac', 'apiServer'],
    properties: {
      image: { type: 'object', additionalProperties: false, required: ['repository', 'pullPolicy'], properties: { repository: { type: 'string', minLength: 1 }, tag: str, pullPolicy: { enum: ['Always', 'IfNotPresent', 'Never'] } } },
      replicas: { type: 'integer', minimum: 1, maximum: 10 },
      shards: { type: 'integer', minimum: 1, maximum: MAX_SHARDS },
      resources,
      extraArgs: { type: 'array', items: str },
      rbac: { type: 'object', additionalProperties: false, properties: { rayTokenAuthSecrets: { type: 'array', items: { type: 'string', pattern: '^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$', maxLength: 253 } } } },
      apiServer: {
        type: 'object',
        additionalProperties: false,
        properties: {
          enabled: { type: 'boolean' },
          tlsSecretName: str,
          port: { type: 'integer', minimum: 1, maximum: 65535 },
          replicas: { type: 'integer', minimum: 1, maximum: 10 },
          resources,
          impersonation: { enum: ['classic', 'constrained'] },
          dashboard: { type: 'boolean' },
        },
      },
    },
  };
}

function packageVersion(): string {
  return JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')).version;
}

/**
 * `rayshift.nodeOptions`: node-heap.ts's `nodeHeapOptions` of a memory limit (a Kubernetes quantity
 * in the units `quantityMiB` reads), for the values that set `resources`; helm-chart.test.ts checks
 * that helm renders what the construct derives, for binary and decimal units.
 */
const NODE_OPTIONS_TEMPLATE = `{{- define "rayshift.nodeOptions" -}}
{{- $q := toString . -}}
{{- $n := regexFind "^[0-9]+([.][0-9]+)?" $q -}}
{{- $unit := trimPrefix $n $q -}}
{{- $bytes := dict "" 1.0 "Ki" 1024.0 "Mi" 1048576.0 "Gi" 1073741824.0 "Ti" 1099511627776.0 "k" 1000.0 "M" 1000000.0 "G" 1000000000.0 "T" 1000000000000.0 -}}
{{- if or (eq $n "") (not (hasKey $bytes $unit)) -}}
{{- fail (printf "resources.limits.memory: %q is not a memory quantity the chart reads (e.g. 256Mi, 1Gi, 300M)" $q) -}}
{{- end -}}
--max-old-space-size={{ divf (mulf (float64 $n) (get $bytes $unit)) 2097152.0 | floor | int }} --max-semi-space-size=2
{{- end -}}
`;

const HEADER = '# Generated by scripts/helm-chart.ts from operator/chart (npm run chart:helm); do not edit.\n';

/** Every file of the chart, by its path inside the chart folder. */
export function renderHelmChart(): Map<string, string> {
  const version = packageVersion();
  const classic = synth(tokenProps('classic', false), true);
  const withSecrets = synth(tokenProps('classic', true), true);
  const sharded = synth(tokenProps('classic', false, true, true), true);
  const shardedWithSecrets = synth(tokenProps('classic', true, true, true), true);
  const constrained = synth(tokenProps('constrained', false), true);
  const constrainedApiOnly = synth(tokenProps('constrained', false, false), true);
  const classicApiOnly = synth(tokenProps('classic', false, false), true);
  const crds = classic.operator.filter((m) => m.kind === 'CustomResourceDefinition');
  const operatorDocs = (docs: Manifest[]) => docs.filter((m) => m.kind !== 'CustomResourceDefinition');
  const files = new Map<string, string>();
  files.set('Chart.yaml', HEADER + stringify({
    apiVersion: 'v2',
    name: 'rayshift',
    description: 'The rayshift operator: incremental RayService upgrades and coordinated RoleBasedGroup rollouts (and, optionally, its core API server).',
    type: 'application',
    version,
    appVersion: version,
    // The chart's ValidatingAdmissionPolicy is admissionregistration.k8s.io/v1.
    kubeVersion: '>=1.30.0-0',
    home: 'https://github.com/rayshift/rayshift',
    keywords: ['ray', 'kuberay', 'rayservice', 'rolebasedgroup', 'operator'],
  }));
  files.set('values.yaml', VALUES_DOC + stringify(defaultValues()));
  files.set('values.schema.json', `${JSON.stringify(valuesSchema(), null, 2)}\n`);
  for (const crd of crds) files.set(`crds/${crd.metadata.name}.yaml`, HEADER + yamlOf(crd));
  files.set('templates/operator.yaml', HEADER + substitute(mergeChoices([
    { when: 'and .Values.rbac.rayTokenAuthSecrets (gt (int .Values.shards) 1)', docs: operatorDocs(shardedWithSecrets.operator) },
    { when: 'and .Values.rbac.rayTokenAuthSecrets (le (int .Values.shards) 1)', docs: operatorDocs(withSecrets.operator) },
    { when: 'and (not .Values.rbac.rayTokenAuthSecrets) (gt (int .Values.shards) 1)', docs: operatorDocs(sharded.operator) },
    { when: 'else', docs: operatorDocs(classic.operator) },
  ])));
  files.set('templates/api-server.yaml', `${HEADER}{{- if .Values.apiServer.enabled }}\n${substitute(mergeChoices([
    { when: 'and (eq .Values.apiServer.impersonation "constrained") .Values.apiServer.dashboard', docs: constrained.apiServer },
    { when: 'and (eq .Values.apiServer.impersonation "constrained") (not .Values.apiServer.dashboard)', docs: constrainedApiOnly.apiServer },
    { when: 'and (ne .Values.apiServer.impersonation "constrained") .Values.apiServer.dashboard', docs: classic.apiServer },
    { when: 'else', docs: classicApiOnly.apiServer },
  ]))}{{- end }}\n`);
  files.set('templates/_helpers.tpl', HEADER + NODE_OPTIONS_TEMPLATE);
  files.set('templates/NOTES.txt', `rayshift {{ .Chart.AppVersion }}: the operator runs in {{ .Release.Namespace }} ({{ .Values.replicas }} replicas, {{ if gt (int .Values.shards) 1 }}sharing {{ .Values.shards }} shards{{ else }}one leading{{ end }}).
{{- if .Values.apiServer.enabled }}
The core API server: service ${API_SERVER_NAME}.{{ .Release.Namespace }}, port {{ .Values.apiServer.port }} (HTTPS){{ if .Values.apiServer.dashboard }}; the dashboard is under /ui/{{ end }}.
{{- end }}
Create a rayshift.dev/v1alpha1 RayService to upgrade incrementally; \`kubectl get rayservices.rayshift.dev -A\` shows them.
`);
  files.set('.helmignore', '# Nothing to ignore: every file of this generated chart belongs to it.\n');
  return files;
}

/** Writes the chart into `dir` (replacing what was there). */
export function writeHelmChart(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
  for (const [file, text] of renderHelmChart()) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
}

if (require.main === module) {
  const dir = process.argv[2] ?? path.join(__dirname, '..', 'charts', 'rayshift');
  writeHelmChart(dir);
  process.stdout.write(`wrote ${path.relative(process.cwd(), dir) || dir}\n`);
}
