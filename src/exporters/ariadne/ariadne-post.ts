import { getDefaultRedactor, redactThenClip, warmDefaultRedactor } from '../../core/redaction/redactor.js';
import { describeError } from './describe-error.js';

/** Where and how {@link postToAriadne} sends. */
export interface AriadneTarget {
  url: string;
  headers: Record<string, string>;
  timeoutMs: number;
  fetch: typeof globalThis.fetch;
  warn: (line: string) => void;
}

/**
 * POSTs one batch. `unreachable`: the body did not arrive; `timeout`: it may have arrived (a
 * slow receiver), so its spans are not sent again. Either way the caller stops early. A POST
 * that times out is tried again while `attempts` last.
 */
export async function postToAriadne(
  target: AriadneTarget,
  body: string,
  count: number,
  attempts: number,
): Promise<'ok' | 'rejected' | 'unreachable' | 'timeout'> {
  const { url, headers, timeoutMs, warn } = target;
  // Log lines are redacted too: the URL's query may hold a key (`?api_key=...`), and the
  // receiver's answer may quote what it refused (redacted before it is clipped). The rules are
  // compiled in slices the first time, not in one 23-31 ms piece on the exporter's turn.
  await warmDefaultRedactor();
  const redact = getDefaultRedactor();
  const where = redact(url);
  for (let attempt = 1; attempt <= attempts; attempt++) {
    try {
      const response = await target.fetch(url, {
        method: 'POST',
        headers,
        body,
        signal: AbortSignal.timeout(timeoutMs),
      });
      const text = await response.text();
      if (response.ok) return 'ok';
      warn(
        `POST ${where} answered ${response.status} for ${count} events: ${redactThenClip(text, 500, redact)}`,
      );
      return 'rejected';
    } catch (error) {
      const name = (error as Error)?.name;
      const timedOut = name === 'TimeoutError' || name === 'AbortError';
      if (timedOut && attempt < attempts) continue;
      const reason = timedOut
        ? `timed out after ${timeoutMs} ms${attempt > 1 ? ' (retried once)' : ''}`
        : describeError(error);
      warn(`POST ${where} failed for ${count} events: ${redact(reason)}`);
      return timedOut ? 'timeout' : 'unreachable';
    }
  }
  return 'timeout';
}
