/**
 * Issue 47 point 1: a fresh process builds a compacted session's request from the stored
 * layout with slices joined by `concat` (`flat()` before it; a loop over every sent message was most of its first
 * call, run before V8 compiled it). Property: the same request as the loop over positions it
 * replaced (a message at a `metaAt` position stripped, the summary at its place), for any
 * layout, stored lists unsorted, repeated or holding non-positions included.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CompactedLayout, PackedLayout } from '../../store/stored-counts.js';
import { isLayout, layoutRequest } from './quick-compacted.js';

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
  for (const part of layout.parts!) {
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
          const history = { messages, length: messages.length, metaAt: metaAt as number[], strip };
          const sent = layoutRequest(layout, history, summary)!;
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
    const sent = layoutRequest(layout, { messages, length: messages.length, metaAt, strip }, summary);
    expect(sent).toHaveLength(12_001);
    expect(sent).toEqual(byPosition(layout, messages, metaAt, strip, summary));
  });
});

/**
 * A view's request as the two stored forms write it: the positions sent (increasing, gaps
 * between them), some rewritten, the summary before entry `summaryBefore` (-1: none).
 */
function bothForms(view: { at: number; rewritten: boolean }[], summaryBefore: number) {
  const parts: NonNullable<CompactedLayout['parts']> = [];
  const packed: PackedLayout = { v: 1, spans: [], at: [], wires: [] };
  let split = false;
  view.forEach(({ at, rewritten }, k) => {
    if (k === summaryBefore) split = true;
    const wire = { role: 'tool', content: `cleared ${at}` };
    if (rewritten) {
      parts.push({ wire });
      packed.at.push(at);
      packed.wires.push(wire);
    } else {
      const last = parts.at(-1);
      if (!split && Array.isArray(last) && last[1] === at) last[1] = at + 1;
      else parts.push([at, at + 1]);
    }
    if (!split && packed.spans.at(-1) === at) packed.spans[packed.spans.length - 1] = at + 1;
    else packed.spans.push(at, at + 1);
    split = false;
  });
  const base = {
    stamp: 's',
    summaryAt: summaryBefore,
    summaryTokens: 0,
    entries: view.length,
    paceAfter: 0,
    paceFound: false,
  };
  return { parts: { ...base, parts } as CompactedLayout, packed: { ...base, packed } as CompactedLayout };
}

const viewOf = fc.array(fc.tuple(fc.nat(3), fc.boolean()), { minLength: 1, maxLength: 40 }).chain((steps) => {
  let at = 0;
  const view = steps.map(([gap, rewritten]) => {
    at += gap;
    return { at: at++, rewritten };
  });
  return fc.tuple(fc.constant(view), fc.integer({ min: -1, max: view.length - 1 }));
});

const message = (i: number) => ({ role: 'user', content: `m${i}`, meta: i });
const strip = (m: unknown) => ({ ...(m as object), meta: undefined });
const summary = { role: 'user', content: 'summary' };

describe('layoutRequest of a packed layout (issue 47: no array per run, no loop of its own to check it)', () => {
  it('sends what the layout written as parts sends, for any view', () => {
    fc.assert(
      fc.property(viewOf, fc.array(fc.nat(130), { maxLength: 8 }), ([view, summaryBefore], metaAt) => {
        const { parts, packed } = bothForms(view, summaryBefore);
        const length = view.at(-1)!.at + 1;
        // Stripped positions are the ones sent as given (a warm call's record has no others).
        const given = metaAt.filter((i) => view.some((e) => e.at === i && !e.rewritten));
        const messages = Array.from({ length: length + 2 }, (_, i) => message(i));
        const history = { messages, length, metaAt: given, strip };
        expect(isLayout(packed, length)).toBe(true);
        const sent = layoutRequest(packed, history, summary);
        expect(sent).toEqual(byPosition(parts, messages, given, strip, summary));
        expect(sent).toEqual(layoutRequest(parts, history, summary));
      }),
      { numRuns: 500 },
    );
  });

  it('a record with parts is read by them, whatever packed form it carries', () => {
    const view = [0, 1, 2, 5, 6].map((at, k) => ({ at, rewritten: k === 3 }));
    const { parts, packed } = bothForms(view, 2);
    const other = bothForms([{ at: 0, rewritten: true }], -1).packed.packed;
    const messages = Array.from({ length: 8 }, (_, i) => message(i));
    const history = { messages, length: 7, metaAt: [], strip };
    const both = { ...parts, packed: other } as CompactedLayout;
    expect(isLayout(both, 7)).toBe(true);
    expect(layoutRequest(both, history, summary)).toEqual(layoutRequest(packed, history, summary));
    expect(isLayout({ ...both, parts: 'x' }, 7)).toBe(false);
  });

  it('a packed layout that does not read as its request sends nothing (the full path answers)', () => {
    const view = [0, 1, 2, 5, 6].map((at, k) => ({ at, rewritten: k === 3 }));
    const { packed } = bothForms(view, 2);
    const good = packed.packed!;
    const messages = Array.from({ length: 8 }, (_, i) => message(i));
    const history = { messages, length: 7, metaAt: [], strip };
    const read = (change: Partial<PackedLayout>, layout: Partial<CompactedLayout> = {}) =>
      layoutRequest({ ...packed, ...layout, packed: { ...good, ...change } }, history, summary);
    expect(read({})).toHaveLength(6);
    const broken: [Partial<PackedLayout>, Partial<CompactedLayout>?][] = [
      [{ at: [4] }], // in no span
      [{ at: [5, 5], wires: [1, 2] }], // twice
      [{ spans: [0, 2, 1, 3, 5, 7] }], // overlapping spans
      [{ spans: [0, 2, 2, 3, 5, 8] }], // past the record's history
      [{ spans: [0, 2, 2, 3, 5, 6.5] }],
      [{ spans: [0, 2, 2, 3, '5' as unknown as number, 7] }],
      [{ at: ['5' as unknown as number] }],
      [{}, { entries: 4 }],
      [{}, { summaryAt: 9 }],
    ];
    for (const [change, layout] of broken)
      expect(read(change, layout), JSON.stringify(change)).toBeUndefined();
    for (const change of [{ v: 2 }, { spans: [0, 2, 2] }, { wires: [] }, { at: 'x' }])
      expect(isLayout({ ...packed, packed: { ...good, ...change } }, 7), JSON.stringify(change)).toBe(false);
    expect(isLayout({ ...packed, packed: undefined }, 7)).toBe(false);
  });
});
