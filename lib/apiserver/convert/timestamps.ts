/** Kubernetes time strings and protobuf Timestamps. */
import { timestampFromMs, type Timestamp } from '@bufbuild/protobuf/wkt';

/** The Timestamp of an RFC 3339 time, or undefined when absent or unparsable. */
export function timestampOf(time: unknown): Timestamp | undefined {
  if (typeof time !== 'string') return undefined;
  const ms = Date.parse(time);
  return Number.isNaN(ms) ? undefined : timestampFromMs(ms);
}
