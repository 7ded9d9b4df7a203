/** Shared pieces of the background-compaction tests: a counter, histories, gated summarizers. */

import type { SummarizeRequest, SummarizeResult, Summarizer } from '../../src/core/summary/summarizer.js';

/** One token per character of content: makes thresholds exact in tests. */
export { charCounter } from './manager-fixtures.js';

/** `n` user/assistant turns of `size` characters per message (200 tokens a turn by default). */
export function chatTurns(n: number, size = 100, tag = ''): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (let i = 0; i < n; i++) {
    out.push({ role: 'user', content: `Q${tag}${i} `.padEnd(size, 'q') });
    out.push({ role: 'assistant', content: `A${tag}${i} `.padEnd(size, 'a') });
  }
  return out;
}

/**
 * A summarizer whose calls wait until released (or aborted through their signal), recording
 * each request. The summary names the call and the first and last folded ids.
 */
export class GatedSummarizer implements Summarizer {
  readonly name: string;
  readonly requests: SummarizeRequest[] = [];
  readonly aborted: number[] = [];
  #open = false;
  #waiting: (() => void)[] = [];
  #arrivals: { count: number; resolve: () => void }[] = [];

  constructor(name = 'gated', open = false) {
    this.name = name;
    this.#open = open;
  }

  async summarize(request: SummarizeRequest): Promise<SummarizeResult> {
    const call = this.requests.push(request);
    for (const arrival of this.#arrivals.filter((a) => a.count <= call)) arrival.resolve();
    this.#arrivals = this.#arrivals.filter((a) => a.count > call);
    if (!this.#open) {
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => {
          this.aborted.push(call);
          reject(request.signal!.reason);
        };
        request.signal?.addEventListener('abort', onAbort, { once: true });
        this.#waiting.push(() => {
          request.signal?.removeEventListener('abort', onAbort);
          resolve();
        });
      });
    }
    const ids = request.messages.map((m) => m.id);
    return {
      text: `${this.name} call ${call}: ${ids.length} messages, ${ids[0]} to ${ids.at(-1)}${request.agent ? ` for ${request.agent}` : ''}`,
    };
  }

  /**
   * Resolves once `count` requests have arrived: the event a test waits for, however many
   * turns of the event loop a preparation takes on a slow machine (it redacts in time slices).
   */
  requested(count = 1): Promise<void> {
    if (this.requests.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.#arrivals.push({ count, resolve }));
  }

  /** Lets every waiting and future call finish. */
  release(): void {
    this.#open = true;
    for (const resume of this.#waiting.splice(0)) resume();
  }
}

/** Resolves after the event loop ran the pending immediates (a preparation has started). */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Turns of the event loop until `check` holds, however many that takes: a preparation redacts
 * its input in time slices before it calls the summarizer, so on a slow machine that takes
 * many turns (the test's timeout bounds a hang). Prefer an event where there is one
 * ({@link GatedSummarizer.requested}).
 */
export async function turnsUntil(check: () => boolean): Promise<void> {
  while (!check()) await nextTurn();
}
