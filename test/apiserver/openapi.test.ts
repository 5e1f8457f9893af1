/** The OpenAPI 3.1 document built from the descriptors: every REST route is in it, and `redocly lint` accepts it. */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { buildOpenApi } from '../../lib/apiserver/openapi/build-openapi';
import { embeddedComments } from '../../lib/apiserver/openapi/proto-comments';
import { httpRoutes } from '../../lib/apiserver/rest/http-rules';
import { openApiPath } from '../../lib/apiserver/rest/path-template';
import { API_SERVICES } from '../../lib/apiserver/services';
import { projectRoot } from '../../lib/crds/resolve';

const routes = httpRoutes(API_SERVICES);
const doc = buildOpenApi(routes, { title: 'rayshift core API', version: 'test' }, embeddedComments()) as { openapi: string; paths: Record<string, Record<string, any>>; components: { schemas: Record<string, any> } };

test('every REST route of the annotations is an operation, with its path parameters', () => {
  expect(doc.openapi).toBe('3.1.0');
  const operations = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`));
  expect(operations.sort()).toEqual(routes.map((r) => `${r.httpMethod} ${openApiPath(r.template)}`).sort());
  for (const r of routes) {
    const op = doc.paths[openApiPath(r.template)][r.httpMethod.toLowerCase()];
    expect(op.parameters.filter((p: { in: string }) => p.in === 'path').map((p: { name: string }) => p.name)).toEqual(r.template.fieldPaths);
  }
});

test('schemas follow the proto3 JSON mapping', () => {
  const svc = doc.components.schemas['rayshift.v1.RayService'];
  expect(svc.properties.generation).toEqual({ type: 'string', format: 'int64', readOnly: true, description: '`metadata.generation`.' });
  expect(svc.properties.createTime).toEqual({ type: 'string', format: 'date-time', readOnly: true, description: '`metadata.creationTimestamp`.' });
  expect(svc.description).toBe('A Ray Serve service on Kubernetes (`rayshift.dev/v1alpha1` or `ray.io/v1` RayService).');
  expect(doc.components.schemas['rayshift.v1.Executor'].enum).toEqual(['EXECUTOR_UNSPECIFIED', 'EXECUTOR_OPERATOR', 'EXECUTOR_KUBERAY']);
  expect(doc.components.schemas['rayshift.v1.RayServiceSpec'].properties.overlay).toMatchObject({ type: 'object', additionalProperties: true });
  const list = doc.paths['/apis/rayshift/v1/namespaces/{namespace}/rayservices'].get;
  expect(list.parameters.map((p: { name: string }) => p.name)).toEqual(['namespace', 'page_size', 'page_token', 'label_selector', 'executor']);
  expect(list.summary).toBe('Lists the RayServices of a namespace, one page at a time.');
  expect(list.parameters.find((p: { name: string }) => p.name === 'page_size').description).toBe('Largest page, at most 500 (larger sizes are served as 500); 0 means 500.');
  const watch = doc.paths['/apis/rayshift/v1/namespaces/{namespace}/rayservices/{name}/upgrade:watch'].get;
  expect(Object.keys(watch.responses['200'].content)).toEqual(['text/event-stream']);
});

test('the events and revisions of a RayService are operations with their response schemas', () => {
  const base = '/apis/rayshift/v1/namespaces/{namespace}/rayservices/{name}';
  for (const [sub, response] of [['events', 'ListRayServiceEventsResponse'], ['revisions', 'ListRayServiceRevisionsResponse']]) {
    const op = doc.paths[`${base}/${sub}`].get;
    expect(op.operationId).toBe(`RayServiceService_ListRayService${sub[0].toUpperCase()}${sub.slice(1)}`);
    expect(op.responses['200'].content['application/json'].schema).toEqual({ $ref: `#/components/schemas/rayshift.v1.${response}` });
  }
  const revision = doc.components.schemas['rayshift.v1.RayServiceRevision'];
  expect(Object.keys(revision.properties)).toEqual(['specHash', 'cluster', 'state', 'current', 'createTime', 'serveConfigV2', 'rayClusterConfig']);
  expect(doc.components.schemas['rayshift.v1.RevisionState'].enum).toEqual(['REVISION_STATE_UNSPECIFIED', 'REVISION_STATE_NOT_RUNNING', 'REVISION_STATE_ACTIVE', 'REVISION_STATE_PENDING', 'REVISION_STATE_RETIRED']);
  expect(doc.components.schemas['rayshift.v1.UpgradeStatus'].properties.executorStatus).toMatchObject({ type: 'object', additionalProperties: true });
});

test('redocly lint accepts the document without errors or warnings', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rayshift-openapi-'));
  const file = path.join(dir, 'openapi.json');
  fs.writeFileSync(file, JSON.stringify(doc, null, 2));
  try {
    const bin = path.join(projectRoot(), 'node_modules', '.bin', 'redocly');
    const run = await promisify(execFile)(bin, ['lint', '--format=stylish', file], { cwd: dir, timeout: 150_000, env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } }).catch((e: { stdout?: string; stderr?: string; code?: number }) => e);
    const out = `${run.stdout ?? ''}${run.stderr ?? ''}`;
    expect({ code: (run as { code?: number }).code ?? 0, out }).toMatchObject({ code: 0 });
    expect(out).toMatch(/Your API description is valid/);
    expect(out).not.toMatch(/You have \d+ warning/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 180_000);
