/** A reader of server-sent events as the API server's REST watch sends them. */
import { ApiError } from './api-error';

/**
 * Parses a server-sent-event stream (`event:`/`data:` lines, a blank line ends an event) and calls
 * `onMessage` with each `message` event's data and `onBytes` on every chunk (liveness); resolves at
 * the end of the stream, rejects with an `error` event's google.rpc.Status as an `ApiError`.
 */
export async function readEventStream(body: ReadableStream<Uint8Array>, onMessage: (data: string) => void, onBytes: () => void): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let event = 'message';
  let data: string[] = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    onBytes();
    buffer += decoder.decode(value, { stream: true });
    let newline: number;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, newline).replace(/\r$/, '');
      buffer = buffer.slice(newline + 1);
      if (line === '') {
        if (data.length > 0) {
          const text = data.join('\n');
          if (event === 'error') {
            const status = JSON.parse(text) as { code?: number; message?: string };
            throw new ApiError(200, status.code ?? 2, status.message ?? 'the watch failed');
          }
          if (event === 'message') onMessage(text);
        }
        event = 'message';
        data = [];
      } else if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
  }
}
