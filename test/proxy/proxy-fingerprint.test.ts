/**
 * Issue 47 point 2: the proxy's session fingerprint of a long opening (100k tiny user messages
 * took 55 ms in one piece) is hashed a message at a time, across turns of the event loop, and
 * gives the id a single `JSON.stringify` of the opening gave (ids outlive a restart). Turns are
 * counted with setImmediate ticks under a clock that advances a millisecond a reading: no
 * timing is asserted.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { clock } from '../../src/core/clock.js';
import type { MessageFormat } from '../../src/core/messages/message.js';
import { fingerprintSession } from '../../src/proxy/index.js';
import { fingerprintInSlices } from '../../src/proxy/sessions/session-of-request.js';

/** The id as the proxy computed it before (one `JSON.stringify` of the opening). */
function oneStringify(format: MessageFormat, messages: readonly unknown[]): string {
  const record = (m: unknown) => m as Record<string, unknown> | null;
  let end = messages.length;
  for (let i = 0; i < messages.length; i++) {
    const type = record(messages[i])?.type;
    if (
      (type !== undefined && type !== 'message') ||
      !['user', 'system', 'developer'].includes(String(record(messages[i])?.role))
    ) {
      end = i;
      break;
    }
  }
  const opening = end > 0 ? messages.slice(0, end) : messages.slice(0, 1);
  const words = opening.filter((m) => !['system', 'developer'].includes(String(record(m)?.role)));
  const json = JSON.stringify(words.length > 0 ? words : opening, (key, value) =>
    key === 'cache_control' ? undefined : value,
  );
  return `fp-${createHash('sha256').update(`${format}\u0000`).update(json).digest('hex').slice(0, 32)}`;
}

const text = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.constant('x'.repeat(70_000)));
const message = fc.oneof(
  fc.record({ role: fc.constantFrom('user', 'system', 'developer', 'assistant', 'tool'), content: text }),
  fc.record({
    role: fc.constantFrom('user', 'assistant'),
    content: fc.array(
      fc.record({ type: fc.constant('text'), text, cache_control: fc.constant({ type: 'ephemeral' }) }),
    ),
  }),
  fc.record({ type: fc.constantFrom('message', 'function_call', 'reasoning'), role: fc.constant('user') }),
  fc.constant(null),
);

afterEach(() => {
  vi.restoreAllMocks();
});

describe('the proxy fingerprint in slices', () => {
  it('gives the id of one JSON.stringify of the opening', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<MessageFormat>('openai-chat', 'anthropic', 'openai-responses'),
        fc.array(message, { maxLength: 12 }),
        async (format, messages) => {
          const id = oneStringify(format, messages);
          expect(fingerprintSession(format, messages)).toBe(id);
          expect((await fingerprintInSlices(format, messages)).id).toBe(id);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('gives the loop turns while it hashes a long opening', async () => {
    const messages = Array.from({ length: 3_000 }, (_, i) => ({ role: 'user', content: `hi ${i}` }));
    let now = 0;
    vi.spyOn(clock, 'now').mockImplementation(() => now++);
    let turns = 0;
    let ticking = true;
    const tick = () => {
      if (!ticking) return;
      turns++;
      setImmediate(tick);
    };
    setImmediate(tick);
    const { id, span } = await fingerprintInSlices('openai-chat', messages);
    ticking = false;
    expect(id).toBe(oneStringify('openai-chat', messages));
    expect(span).toBe(Number.POSITIVE_INFINITY);
    // A pause every 5 readings, a reading a message: hundreds of turns (none in one piece).
    expect(turns).toBeGreaterThan(100);
  });
});
