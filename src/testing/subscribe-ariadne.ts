import type { StoredAriadneEvent } from './validate-ariadne-event.js';

/** A live `GET /events` subscription. */
export interface AriadneSubscription {
  /** Every frame received after `connected`, parsed. */
  readonly events: StoredAriadneEvent[];
  /** Resolves when `predicate` holds for the frames received so far (rejects after `timeoutMs`). */
  waitFor(
    predicate: (events: StoredAriadneEvent[]) => boolean,
    timeoutMs?: number,
  ): Promise<StoredAriadneEvent[]>;
  close(): void;
}

/**
 * Subscribes to an Ariadne server's `/events` stream (the test receiver or a real Ariadne)
 * and resolves once the `connected` frame has arrived, so nothing ingested afterwards is missed.
 */
export async function subscribeAriadne(
  baseUrl: string,
  filters: { traceId?: string; kinds?: string[] } = {},
): Promise<AriadneSubscription> {
  const url = new URL('/events', baseUrl);
  if (filters.traceId) url.searchParams.set('traceId', filters.traceId);
  if (filters.kinds) url.searchParams.set('kinds', filters.kinds.join(','));
  const controller = new AbortController();
  const response = await fetch(url, { signal: controller.signal, headers: { accept: 'text/event-stream' } });
  if (!response.ok || !response.body) throw new Error(`GET ${url} answered ${response.status}`);
  const events: StoredAriadneEvent[] = [];
  const listeners = new Set<() => void>();
  let connected!: () => void;
  const ready = new Promise<void>((resolve) => {
    connected = resolve;
  });
  const decoder = new TextDecoder();
  void (async () => {
    let buffer = '';
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let end = buffer.indexOf('\n\n');
        while (end >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = frame
            .split('\n')
            .filter((line) => line.startsWith('data:'))
            .map((line) => line.slice(5).trimStart())
            .join('\n');
          if (data) {
            const parsed = JSON.parse(data) as StoredAriadneEvent | { type: 'connected' };
            if (parsed.type === 'connected') connected();
            else events.push(parsed as StoredAriadneEvent);
            for (const listener of listeners) listener();
          }
          end = buffer.indexOf('\n\n');
        }
      }
    } catch {
      // Aborted by close().
    }
  })();
  await ready;
  return {
    events,
    waitFor(predicate, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (predicate(events)) {
            listeners.delete(check);
            clearTimeout(timer);
            resolve(events);
          }
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`no matching events over SSE within ${timeoutMs} ms (got ${events.length})`));
        }, timeoutMs);
        listeners.add(check);
        check();
      });
    },
    close() {
      controller.abort();
    },
  };
}
