import type { AriadneEvent, AriadneSpanEvent, AriadneTraceEvent } from './ariadne-event.js';

/**
 * Splits Ariadne events into `{batch}` bodies of at most `maxBodyBytes` bytes. An event
 * that is too big on its own has its longest strings shortened until it fits.
 */
export function splitAriadneBatches(
  events: readonly (AriadneTraceEvent | AriadneSpanEvent)[],
  maxBodyBytes: number,
): string[] {
  return groupAriadneBatches(events, maxBodyBytes).map((batch) => batch.body);
}

/** {@link splitAriadneBatches}, keeping the events of each body. */
export function groupAriadneBatches(
  events: readonly AriadneEvent[],
  maxBodyBytes: number,
): { body: string; events: AriadneEvent[] }[] {
  const batches: { body: string; events: AriadneEvent[] }[] = [];
  const overhead = Buffer.byteLength('{"batch":[]}');
  let parts: string[] = [];
  let members: AriadneEvent[] = [];
  let size = overhead;
  const close = () => {
    batches.push({ body: `{"batch":[${parts.join(',')}]}`, events: members });
    parts = [];
    members = [];
    size = overhead;
  };
  for (const event of events) {
    const json = shrinkToFit(event, maxBodyBytes - overhead);
    const bytes = Buffer.byteLength(json);
    if (parts.length > 0 && size + bytes + 1 > maxBodyBytes) close();
    parts.push(json);
    members.push(event);
    size += bytes + (parts.length > 1 ? 1 : 0);
  }
  if (parts.length > 0) close();
  return batches;
}

function shrinkToFit(event: AriadneEvent, limit: number): string {
  let json = JSON.stringify(event);
  if (Buffer.byteLength(json) <= limit || event.type !== 'span' || !event.data) return json;
  const data: Record<string, unknown> = { ...event.data, truncated: true };
  for (let round = 0; round < 64 && Buffer.byteLength(json) > limit; round++) {
    let longest: string | undefined;
    for (const [key, value] of Object.entries(data)) {
      const current = longest === undefined ? undefined : data[longest];
      const length = typeof value === 'string' ? value.length : JSON.stringify(value).length;
      const currentLength =
        current === undefined
          ? -1
          : typeof current === 'string'
            ? current.length
            : JSON.stringify(current).length;
      if (length > currentLength) longest = key;
    }
    if (longest === undefined) break;
    const value = data[longest];
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    data[longest] = `${text.slice(0, Math.floor(text.length / 2))}… [truncated]`;
    json = JSON.stringify({ ...event, data });
  }
  return json;
}
