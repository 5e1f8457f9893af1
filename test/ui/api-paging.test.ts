/** The dashboard's list of every RayService follows next_page_token to the end (short and empty pages included). */
import { listAllRayServices } from '../../ui/src/api';

test('listAllRayServices asks for every page until the token is empty', async () => {
  const pages: Record<string, unknown> = {
    '/apis/rayshift/v1/rayservices': { rayServices: [{ name: 'a', namespace: 'ns-1' }], nextPageToken: 't1' },
    '/apis/rayshift/v1/rayservices?page_token=t1': { nextPageToken: 't/2' },
    '/apis/rayshift/v1/rayservices?page_token=t%2F2': { rayServices: [{ name: 'b', namespace: 'ns-9' }], nextPageToken: '' },
  };
  const asked: string[] = [];
  const store = new Map<string, string>();
  Object.assign(globalThis, { sessionStorage: { getItem: (k: string) => store.get(k) ?? null, setItem: (k: string, v: string) => store.set(k, v), removeItem: (k: string) => store.delete(k) } });
  const fetchMock = jest.spyOn(globalThis, 'fetch').mockImplementation(async (input) => {
    const url = String(input);
    asked.push(url);
    return new Response(JSON.stringify(pages[url] ?? {}), { status: url in pages ? 200 : 404, headers: { 'content-type': 'application/json' } });
  });
  try {
    expect((await listAllRayServices()).map((s) => s.name)).toEqual(['a', 'b']);
    expect(asked).toEqual(Object.keys(pages));
  } finally {
    fetchMock.mockRestore();
    delete (globalThis as { sessionStorage?: unknown }).sessionStorage;
  }
});
