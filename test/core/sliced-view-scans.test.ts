/**
 * Issue 47 point 2 (300k tiny messages through the proxy): the view's scans of every message
 * (`newestBoundary`, the trusted summaries, the assembly of the sent prefix) run as steps that
 * pause every few thousand entries. Same results as the whole scans: `assemble` and
 * `sentPrefixOf` against copies of their former one-piece code (random views with pinned,
 * user-text and boundary entries, both formats), `newestBoundarySteps` from a lower bound
 * against the whole scan. No timing asserted: the pauses are counted.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { newestBoundary, newestBoundarySteps } from '../../src/core/messages/formats/provider-compaction.js';
import type { MessageFormat } from '../../src/core/messages/message.js';
import { assemble, assembleSteps } from '../../src/core/preflight/outcome/assemble.js';
import { sentPrefixOf, sentPrefixSteps } from '../../src/core/preflight/outcome/sent-prefix.js';
import type { SessionView, ViewEntry } from '../../src/core/preflight/view/session-view.js';
import { runSteps } from '../../src/core/time-slice.js';

/** The former `assemble`, one piece (before issue 47's 300k pass). */
function assembleWhole(
  entries: readonly ViewEntry[],
  summaryWire: unknown,
  format: MessageFormat,
): unknown[] {
  const pick = (entry: ViewEntry) => entry.wire;
  if (summaryWire === undefined) return entries.map(pick);
  let suffixStart = entries.findIndex((entry) => !entry.pinned && !entry.userText);
  if (suffixStart < 0 && entries.length > 0) suffixStart = entries.length - 1;
  const head = suffixStart < 0 ? entries : entries.slice(0, suffixStart);
  const rest = suffixStart < 0 ? [] : entries.slice(suffixStart).map(pick);
  const pinned = head.map(pick);
  const firstPinnedRole = head[0]?.item.entry.parsed.role;
  const bounded = head.some((entry) => entry.item.entry.parsed.providerCompaction === 'boundary');
  if (format === 'anthropic' && !bounded && firstPinnedRole !== undefined && firstPinnedRole !== 'user')
    return [summaryWire, ...pinned, ...rest];
  return [...pinned, summaryWire, ...rest];
}

/** The former `sentPrefixOf`, one piece. */
function sentPrefixWhole(
  view: SessionView,
  summaryWire: unknown,
  folded: readonly ViewEntry[],
  format: MessageFormat,
) {
  const last = folded.at(-1);
  if (!last || view.mismatch) return undefined;
  const sentWire = view.entries.find((entry) => entry.item.id === last.item.id)?.wire;
  if (sentWire === undefined) return undefined;
  const sent = assembleWhole(view.entries, view.version > 0 ? summaryWire : undefined, format);
  const end = sent.indexOf(sentWire);
  if (end < 0) return undefined;
  const messages = sent.slice(0, end + 1);
  const summaryIndex = summaryWire === undefined ? -1 : messages.indexOf(summaryWire);
  return { messages, ...(summaryIndex >= 0 ? { summaryIndex } : {}) };
}

type Shape = { pinned: boolean; userText: boolean; boundary: boolean; role: string };

const shape = fc.record({
  pinned: fc.boolean(),
  userText: fc.boolean(),
  boundary: fc.boolean(),
  role: fc.constantFrom('user', 'assistant', 'tool'),
});

function entriesOf(shapes: readonly Shape[]): ViewEntry[] {
  return shapes.map((s, index) => {
    const wire = { n: index };
    const parsed = { role: s.role, ...(s.boundary ? { providerCompaction: 'boundary' } : {}) };
    return {
      item: { id: `m${index}`, index, entry: { parsed } },
      pinned: s.pinned,
      userText: s.userText || undefined,
      round: -1,
      wire,
      tokens: 1,
      originalTokens: 1,
    } as unknown as ViewEntry;
  });
}

/** Runs `steps` at once, counting its pauses. */
function pausesOf<T>(steps: Generator<void, T, void>): { value: T; pauses: number } {
  let pauses = 0;
  for (;;) {
    const next = steps.next();
    if (next.done) return { value: next.value, pauses };
    pauses++;
  }
}

describe('the view scans in steps (issue 47, 300k tiny messages)', () => {
  it('assemble gives what the one-piece assembly gave, in either format', () => {
    fc.assert(
      fc.property(
        fc.array(shape, { maxLength: 40 }),
        fc.boolean(),
        fc.constantFrom<MessageFormat>('anthropic', 'openai-chat'),
        (shapes, withSummary, format) => {
          const entries = entriesOf(shapes);
          const summary = withSummary ? { summary: true } : undefined;
          expect(assemble(entries, summary, format)).toEqual(assembleWhole(entries, summary, format));
          expect(runSteps(assembleSteps(entries, summary, format))).toEqual(
            assembleWhole(entries, summary, format),
          );
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('the sent prefix is the one-piece one', () => {
    fc.assert(
      fc.property(
        fc.array(shape, { minLength: 1, maxLength: 40 }),
        fc.nat(),
        fc.nat({ max: 2 }),
        fc.boolean(),
        fc.constantFrom<MessageFormat>('anthropic', 'openai-chat'),
        (shapes, at, version, mismatch, format) => {
          const entries = entriesOf(shapes);
          const view = { entries, version, mismatch } as unknown as SessionView;
          const folded = entries.slice(0, (at % entries.length) + 1);
          const summary = { summary: true };
          expect(sentPrefixOf(view, summary, folded, format)).toEqual(
            sentPrefixWhole(view, summary, folded, format),
          );
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('the newest boundary from a lower bound starts where the whole scan starts', () => {
    fc.assert(
      fc.property(
        fc.array(fc.boolean(), { maxLength: 60 }),
        fc.integer({ min: -2, max: 70 }),
        (flags, from) => {
          const items = flags.map((boundary) => ({
            entry: { parsed: boundary ? { providerCompaction: 'boundary' as const } : {} },
          }));
          const bounded = runSteps(newestBoundarySteps(items, from));
          expect(Math.max(from, bounded)).toBe(Math.max(from, newestBoundary(items)));
          expect(runSteps(newestBoundarySteps(items))).toBe(newestBoundary(items));
        },
      ),
    );
  });

  it('pauses every few thousand entries over a long view', () => {
    const entries = entriesOf(
      Array.from({ length: 40_000 }, () => ({
        pinned: false,
        userText: false,
        boundary: false,
        role: 'user',
      })),
    );
    const view = { entries, version: 1, mismatch: false } as unknown as SessionView;
    const summary = { summary: true };
    const { value, pauses } = pausesOf(
      sentPrefixSteps(view, summary, entries.slice(0, 30_000), 'openai-chat'),
    );
    expect(value).toEqual(sentPrefixWhole(view, summary, entries.slice(0, 30_000), 'openai-chat'));
    expect(pauses).toBeGreaterThan(40);
    expect(pausesOf(newestBoundarySteps(entries.map((entry) => entry.item))).pauses).toBeGreaterThan(8);
  });
});
