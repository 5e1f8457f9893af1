/**
 * The Kubernetes events of a RayService and of its RayClusters (the operator's analysis verdicts
 * among them), newest first, Warnings highlighted; read again whenever `refreshKey` changes.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, listRayServiceEvents, type RayServiceEventJson } from '../api';
import { clockOf, eventsNewestFirst } from '../model';
import { ColumnHeadings } from './small';

/** After a status change, when the events are read once more, ms. */
const REREAD_MS = 2_000;
/** Most events shown (the newest). */
const MAX_EVENTS = 50;

/** Props of `EventsPanel`. */
export interface EventsPanelProps {
  readonly namespace: string;
  readonly name: string;
  /** Reads the events again when it changes (the page passes the status's resourceVersion). */
  readonly refreshKey: string | undefined;
}

/** The events table, or why it cannot be shown. */
export function EventsPanel({ namespace, name, refreshKey }: EventsPanelProps) {
  const [events, setEvents] = useState<RayServiceEventJson[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  // Requests overlap when the status moves quickly: the answer to the latest one sent wins, and an
  // earlier one arriving late is dropped (cancelling each on the next change could starve the panel).
  const sent = useRef(0);
  const shown = useRef(0);
  useEffect(() => {
    let mounted = true;
    const read = () => {
      const n = ++sent.current;
      const apply = (update: () => void) => {
        if (!mounted || n < shown.current) return;
        shown.current = n;
        update();
      };
      listRayServiceEvents(namespace, name).then(
        (list) =>
          apply(() => {
            setEvents(eventsNewestFirst(list).slice(0, MAX_EVENTS));
            setError(undefined);
          }),
        (e: unknown) => apply(() => setError(e instanceof ApiError ? e.message : 'loading failed')),
      );
    };
    read();
    // The operator records a pass's Events right after the status they go with, so the status
    // change may arrive first; a second read shortly after catches them.
    const again = setTimeout(read, REREAD_MS);
    return () => {
      mounted = false;
      clearTimeout(again);
    };
  }, [namespace, name, refreshKey]);

  if (error && !events) return <p class="muted">Events cannot be read: {error}</p>;
  if (!events) return <p class="muted">Loading…</p>;
  if (events.length === 0) return <p class="muted">No events.</p>;
  return (
    <>
      {error && <p class="muted small">The last refresh failed: {error}</p>}
      <table class="events" data-testid="events">
        <caption>Events, newest first</caption>
        <ColumnHeadings names={['Time', 'Type', 'Reason', 'Object', 'Message', 'Count']} />
        <tbody>
          {events.map((e, i) => (
            <tr key={`${e.regardingKind}/${e.regardingName}/${e.reason}/${e.lastTime}/${i}`} class={e.type === 'Warning' ? 'warning' : ''} data-testid="event" data-reason={e.reason} data-type={e.type}>
              <th scope="row">{clockOf(e.lastTime)}</th>
              <td class={e.type === 'Warning' ? 'error' : 'muted'}>{e.type}</td>
              <td>{e.reason}</td>
              <td>
                {e.regardingKind} {e.regardingName}
              </td>
              <td>{e.note}</td>
              <td>{e.count ?? 1}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
