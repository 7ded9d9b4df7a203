/**
 * Issue 47 point 2: the embedded summary of a long history holds the loop in no step over the
 * whole history. A `Map` grows by copying every entry in one `set`: the key identifiers' token
 * counts (one per id named, 300k "hi N" ids in the tiny-message bench) held the loop 22-40 ms
 * at their growth; reading who the user talks to went through all 300k messages in one step
 * (17-28 ms). Counted, not timed: the largest `Map` any `set` makes, the messages read between
 * two pauses.
 */
import { describe, expect, it } from 'vitest';
import { CHUNK } from '../../src/core/chunked-list.js';
import type { CompactMessage } from '../../src/core/messages/message.js';
import { EmbeddedSummarizer } from '../../src/core/summary/embedded/index.js';
import { collectUserSectionSteps } from '../../src/core/summary/embedded/user-sections.js';
import { messageList } from '../support/compact-messages.js';
import { largestMapDuring } from '../support/grown-arrays.js';

const COUNT = 3 * CHUNK;

describe('the embedded summary of a long history', () => {
  it('counts the key identifiers without growing one Map of them, and gives the same summary', async () => {
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
    const largest = await largestMapDuring(() => {
      text = new EmbeddedSummarizer().summarizeSync(request);
    });
    expect(largest).toBeLessThan(CHUNK);
    expect(text).toContain(`TKT-${100_000 + COUNT - 1}`);
  });
});

describe("a long chat's user sections", () => {
  it('read who the user talks to a thousand messages at a time, with the same sections', () => {
    let reads = 0;
    /** A message whose role is counted as it is read. */
    const counted = <T extends object>(message: T, role: string): T =>
      Object.defineProperty(message, 'role', {
        get: () => {
          reads++;
          return role;
        },
      });
    const list = messageList();
    for (let i = 0; i < COUNT; i++) list.user(`hi ${i}`);
    const messages = list.messages.map((message) => counted({ ...message }, 'user')) as CompactMessage[];
    const sent = Array.from({ length: COUNT }, (_, i) => counted({ content: `hi ${i}` }, 'user'));
    const steps = collectUserSectionSteps(messages, { task: [], instructions: [] }, sent);
    let most = 0;
    let next = steps.next();
    while (!next.done) {
      most = Math.max(most, reads);
      reads = 0;
      next = steps.next();
    }
    most = Math.max(most, reads);
    // A role is read up to three times per message: a thousand messages' reads, not 24k's.
    expect(most).toBeLessThanOrEqual(4 * 1_024);
    expect(next.value.task).toEqual(['"hi 0"']);
  });
});
