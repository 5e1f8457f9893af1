/**
 * A test-only Kubernetes `Transport` for start-up tests of controllers: it records every request
 * and watch stream, answers API discovery from `served`, lists as empty, and holds watch streams
 * open until aborted.
 */
import { HttpRequest, HttpResponse, StreamHandle, Transport } from '../../lib/runtime/kube/transport';

/** Answers discovery from `served` (group/version → plurals), lists as empty, and holds watch streams open until aborted. */
export class ScriptedTransport implements Transport {
  readonly server = 'https://fake';
  readonly requests: string[] = [];
  readonly streams: string[] = [];
  constructor(private readonly served: Record<string, string[]>) {}
  async request(req: HttpRequest): Promise<HttpResponse> {
    this.requests.push(req.path);
    const discovery = /^\/apis\/([^/]+\/[^/?]+)$/.exec(req.path);
    if (discovery) {
      const plurals = this.served[discovery[1]];
      if (!plurals) return reply(404, { kind: 'Status', code: 404, reason: 'NotFound' });
      return reply(200, { kind: 'APIResourceList', groupVersion: discovery[1], resources: plurals.map((name) => ({ name, kind: 'RoleBasedGroup', namespaced: true })) });
    }
    return reply(200, { kind: 'List', metadata: { resourceVersion: '1' }, items: [] });
  }
  async stream(req: HttpRequest): Promise<StreamHandle> {
    this.streams.push(req.path);
    let end!: () => void;
    const done = new Promise<void>((r) => (end = r));
    return { status: 200, done, abort: () => end() };
  }
  close(): void {}
}

function reply(status: number, body: unknown): HttpResponse {
  return { status, headers: { 'content-type': 'application/json' }, text: JSON.stringify(body) };
}
