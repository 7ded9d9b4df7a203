/**
 * Counting ahead gives the loop turns inside one long message (issue 47 point 2: a 10 MB tool
 * output was counted in one block of 800 ms), and its count is the one `countMessage` gives.
 */
import { describe, expect, it } from 'vitest';
import { tokenCounterFor } from '../../counting/token-counter.js';
import { codecFor } from '../../messages/formats/detect-format.js';
import { MessageIndex, toCompactMessage } from '../../messages/message-index.js';
import { TimeSlice } from '../../time-slice.js';
import { countAhead } from './count-ahead.js';
import { IndexedHistory } from './index-request.js';

/** A user message pasting `chars` characters of a log, then a tool call and its result. */
function history(chars: number): unknown[] {
  const line = 'GET /api/v1/users?id=42 200 took 12ms from 10.0.0.7 agent=curl/8.4\n';
  return [
    { role: 'user', content: `Why is this slow?\n${line.repeat(Math.ceil(chars / line.length))}` },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read', arguments: '{}' } }],
    },
    { role: 'tool', tool_call_id: 'call_1', content: 'ok' },
  ];
}

describe('countAhead', () => {
  it('gives the loop a turn before a long message is counted, and counts it as countMessage does', async () => {
    const messages = history(400_000);
    const counter = tokenCounterFor('gpt-4o');
    const indexed = new IndexedHistory();
    indexed.update(messages, codecFor(messages, undefined), new MessageIndex());
    const long = indexed.items.at(0)!;
    // A slice of 0 ms is always due: any pause the work offers is taken.
    const counting = countAhead(
      { counter, history: indexed, stored: undefined, realize: () => ({}) as never, fresh: { count: 0 } },
      new TimeSlice({ sliceMs: 0 }),
    );
    // Scheduled once the work is under way, which began with the long message: it runs before
    // that message's count is stored only if counting it gives the loop a turn.
    let countedWhenTimerRan: number | undefined;
    let timerRan = false;
    setImmediate(() => {
      timerRan = true;
      countedWhenTimerRan = long.entry.tokens.get(counter);
    });
    await counting;
    expect(timerRan).toBe(true);
    expect(countedWhenTimerRan).toBeUndefined();
    expect(long.entry.tokens.get(counter)).toBe(counter.countMessage(toCompactMessage(long)));
  });
});
