/** The dashboard's steering calls reach each verb's REST custom method (`:pause`, `:retryAnalysis`, …) as the proto's HTTP rules name it. */
import { STEERING_VERBS, steer } from '../../ui/src/api';

test('every steering verb posts to its lowerCamelCase custom method with the reason', async () => {
  const asked: string[] = [];
  Object.assign(globalThis, { sessionStorage: { getItem: () => null, setItem: () => undefined, removeItem: () => undefined } });
  const fetchMock = jest.spyOn(globalThis, 'fetch').mockImplementation(async (input, init) => {
    asked.push(`${init?.method} ${String(input)} ${String(init?.body)}`);
    return new Response('{}', { status: 200, headers: { 'content-type': 'application/json' } });
  });
  try {
    for (const verb of STEERING_VERBS) await steer('ns', 'llm', verb, 'why');
    const path = '/apis/rayshift/v1/namespaces/ns/rayservices/llm';
    expect(asked).toEqual(expect.arrayContaining([`POST ${path}:pause {"reason":"why"}`, `POST ${path}:retryAnalysis {"reason":"why"}`, `POST ${path}:skipAnalysis {"reason":"why"}`]));
    expect(asked).toHaveLength(STEERING_VERBS.length);
  } finally {
    fetchMock.mockRestore();
    delete (globalThis as { sessionStorage?: unknown }).sessionStorage;
  }
});
