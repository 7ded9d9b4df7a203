/**
 * Issue 47 point 1: a fresh process builds a compacted session's request from the stored
 * layout with slices joined by `concat` (`flat()` before it; a loop over every sent message was most of its first
 * call, run before V8 compiled it). Property: the same request as the loop over positions it
 * replaced (a message at a `metaAt` position stripped, the summary at its place), for any
 * layout, stored lists unsorted, repeated or holding non-positions included.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CompactedLayout } from '../../session/stored-counts.js';
import { layoutRequest } from './quick-compacted.js';

/** The loop the slices replaced. */
function byPosition(
  layout: CompactedLayout,
  messages: readonly unknown[],
  metaAt: readonly unknown[],
  strip: (message: unknown) => unknown,
  summaryWire: unknown,
): unknown[] {
  const stripped = new Set(metaAt);
  const sent: unknown[] = [];
  for (const part of layout.parts) {
    if (sent.length === layout.summaryAt) sent.push(summaryWire);
    if (!Array.isArray(part)) {
      sent.push(part.wire);
      continue;
    }
    for (let i = part[0]; i < part[1]; i++) sent.push(stripped.has(i) ? strip(messages[i]) : messages[i]);
  }
  return sent;
}

const layoutOf = fc
  .tuple(
    fc.array(fc.oneof(fc.tuple(fc.nat(6), fc.integer({ min: 1, max: 8 })), fc.constant('wire' as const)), {
      maxLength: 12,
    }),
    fc.integer({ min: -1, max: 40 }),
  )
  .map(([steps, summaryAt]) => {
    const parts: CompactedLayout['parts'] = [];
    let at = 0;
    steps.forEach((step, k) => {
      if (step === 'wire') parts.push({ wire: { role: 'tool', content: `cleared ${k}` } });
      else {
        at += step[0];
        parts.push([at, at + step[1]]);
        at += step[1];
      }
    });
    return { parts, summaryAt, length: at };
  });

describe('layoutRequest', () => {
  it('sends what the loop over positions sent', () => {
    fc.assert(
      fc.property(
        layoutOf,
        fc.array(fc.oneof(fc.nat(60), fc.constant(-1), fc.constant(2.5)), { maxLength: 10 }),
        ({ parts, summaryAt, length }, metaAt) => {
          const layout: CompactedLayout = {
            stamp: 's',
            summaryAt,
            summaryTokens: 0,
            parts,
            entries: 0,
            paceAfter: 0,
            paceFound: false,
          };
          const messages = Array.from({ length: length + 3 }, (_, i) => ({
            role: 'user',
            content: `m${i}`,
            meta: i,
          }));
          const strip = (message: unknown) => ({ ...(message as object), meta: undefined });
          const summary = { role: 'user', content: 'summary' };
          const sent = layoutRequest(layout, messages, metaAt as number[], strip, summary);
          expect(sent).toEqual(byPosition(layout, messages, metaAt, strip, summary));
          // The caller's own objects where nothing was stripped.
          for (const message of sent)
            if ((message as { meta?: unknown }).meta !== undefined)
              expect((messages as unknown[]).includes(message)).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('joins more pieces than one concat call takes (runs, wires and stripped messages alternating)', () => {
    const parts: CompactedLayout['parts'] = [];
    for (let i = 0; i < 12_000; i++)
      parts.push(i % 3 === 2 ? { wire: { role: 'tool', content: `c${i}` } } : [i, i + 1]);
    const layout: CompactedLayout = {
      stamp: 's',
      summaryAt: 7_001,
      summaryTokens: 0,
      parts,
      entries: 0,
      paceAfter: 0,
      paceFound: false,
    };
    const messages = Array.from({ length: 12_000 }, (_, i) => ({ role: 'user', content: `m${i}`, meta: i }));
    const metaAt = Array.from({ length: 1_000 }, (_, k) => k * 9);
    const strip = (message: unknown) => ({ ...(message as object), meta: undefined });
    const summary = { role: 'user', content: 'summary' };
    const sent = layoutRequest(layout, messages, metaAt, strip, summary);
    expect(sent).toHaveLength(12_001);
    expect(sent).toEqual(byPosition(layout, messages, metaAt, strip, summary));
  });
});
