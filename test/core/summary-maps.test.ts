/**
 * Issue 47 point 2: the embedded summary of a long history grows no `Map` whole. A `Map` grows
 * by copying every entry in one `set`; the key identifiers' token counts (one per id named,
 * 300k "hi N" ids in the tiny-message bench) held the loop 22-40 ms at their growth. Counted,
 * not timed: the largest `Map` any `set` makes while the summary is written.
 */
import { describe, expect, it } from 'vitest';
import { CHUNK } from '../../src/core/chunked-list.js';
import { EmbeddedSummarizer } from '../../src/core/summary/embedded/index.js';
import { messageList } from '../support/compact-messages.js';

const COUNT = 3 * CHUNK;

/** Runs `run`, returning the largest size a `Map` reached through `set` meanwhile. */
function largestMapDuring(run: () => void): number {
  const set = Map.prototype.set;
  let largest = 0;
  Map.prototype.set = function (this: Map<unknown, unknown>, key: unknown, value: unknown) {
    const out = set.call(this, key, value);
    largest = Math.max(largest, this.size);
    return out;
  };
  try {
    run();
  } finally {
    Map.prototype.set = set;
  }
  return largest;
}

describe('the embedded summary of a long history', () => {
  it('counts the key identifiers without growing one Map of them, and gives the same summary', () => {
    const list = messageList();
    for (let i = 0; i < COUNT; i++) list.user(`please keep ticket TKT-${100_000 + i}`);
    const countTokens = (text: string) => Math.ceil(text.length / 4);
    const request = {
      strategy: 'task_state' as const,
      messages: list.messages,
      maxTokens: 2_000,
      countTokens,
    };
    let text = '';
    const largest = largestMapDuring(() => {
      text = new EmbeddedSummarizer().summarizeSync(request);
    });
    expect(largest).toBeLessThan(CHUNK);
    expect(text).toContain(`TKT-${100_000 + COUNT - 1}`);
  });
});
