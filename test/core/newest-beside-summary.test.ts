/**
 * The Qwen Code shape at 8k (a review through the proxy): a system prompt and tool schemas
 * fill most of the window, a summary is present, and each newest message is a read_file result
 * of several hundred tokens. The last resort cut that newest head and tail while the summary
 * stayed whole with lines (excerpts of old results) worth less than the newest's middle. Now
 * the summary gives up its least valued lines first, never one holding an id, and only when
 * that makes the newest fit; a newest too large even then is cut, the summary kept whole.
 * Here the system prompt takes about 5,900 of the 7,200-token budget, the summary 500 to 600
 * and each newest read about 420 (the old code cut the read of call 3 head and tail).
 */
import { describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import {
  droppableSummaryLines,
  trimSummaryLines,
} from '../../src/core/preflight/cascade/trim-summary-lines.js';

const SYSTEM = `You are a coding agent. ${Array.from({ length: 660 }, (_, i) => `Rule ${i}: follow the house style.`).join(' ')}`;

function note(n: number): string {
  return Array.from({ length: 35 }, (_, i) => `note ${n} line ${i}: the value ${n * 100 + i} is kept`).join(
    '\n',
  );
}

const path = (n: number) => `/home/u/note-${n}.txt`;

/** Read `count` notes, one tool round each, the read result last. */
function rounds(count: number): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: 'Read each note back and tell me they are all there.' },
  ];
  for (let n = 1; n <= count; n++) {
    out.push({
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: `read_${n}`,
          type: 'function',
          function: { name: 'read_file', arguments: JSON.stringify({ file_path: path(n) }) },
        },
      ],
    });
    out.push({ role: 'tool', tool_call_id: `read_${n}`, content: note(n) });
  }
  return out;
}

/** The notes read before `newest` whose path the summary holds. */
function pathsHeld(summary: string | undefined, newest: number): number {
  let held = 0;
  for (let n = 1; n < newest; n++) if (summary?.includes(`${path(n)})`)) held++;
  return held;
}

/** The notes read before `newest` whose path the request holds nowhere (summary or a message). */
function pathsLost(messages: readonly unknown[], newest: number): number[] {
  const text = JSON.stringify(messages);
  const lost: number[] = [];
  for (let n = 1; n < newest; n++) if (!text.includes(path(n))) lost.push(n);
  return lost;
}

describe('the newest message beside the summary', () => {
  it('sends every newest read whole when the summary gives up its excerpts, its ids kept', async () => {
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 8_000 });
    let compacted = 0;
    let reported = 0;
    const events: number[] = [];
    manager.on('compact.reduction', (event) => {
      if (event.properties.summaryLinesGivenUp !== undefined)
        events.push(event.properties.summaryLinesGivenUp);
    });
    for (let n = 1; n <= 12; n++) {
      const result = await manager.compact('notes', rounds(n));
      const cut = result.levels.find((level) => level.level === 'cut_oversized');
      if (cut?.summaryLinesGivenUp) reported++;
      expect(result.tokensAfter).toBeLessThanOrEqual(result.budget);
      const last = result.messages.at(-1) as { content: string };
      expect(last.content, `call ${n}`).toBe(note(n));
      if (!result.applied) continue;
      compacted++;
      // Every earlier read keeps its path, in the summary or verbatim, whatever excerpt went.
      expect(result.summary?.text, `call ${n}`).toMatch(/<COMPACT-SUMMARY v\d+>/);
      expect(pathsLost(result.messages, n), `call ${n}`).toEqual([]);
    }
    await manager.shutdown();
    expect(compacted).toBeGreaterThan(5);
    // The result and the trace say when the summary gave up lines for the newest.
    expect(reported).toBeGreaterThan(0);
    expect(events.length).toBe(reported);
    expect(Math.min(...events)).toBeGreaterThan(0);
  });

  it('still cuts a newest message too large for what the excerpts free, the summary kept whole', async () => {
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 8_000 });
    let before: string | undefined;
    for (let n = 1; n <= 6; n++) before = (await manager.compact('huge', rounds(n))).summary?.text;
    const history = rounds(7);
    const huge = Array.from({ length: 900 }, (_, i) => `log line ${i}: step ${i} passed`).join('\n');
    (history.at(-1) as { content: string }).content = huge;
    const result = await manager.compact('huge', history);
    await manager.shutdown();
    expect(result.tokensAfter).toBeLessThanOrEqual(result.budget);
    const last = result.messages.at(-1) as { content: string };
    expect(last.content).toMatch(/cut here/);
    // Nothing given up for a message cut anyway: every line of the summary before is still there.
    expect(pathsHeld(result.summary?.text, 7)).toBe(6);
    const cut = result.levels.find((level) => level.level === 'cut_oversized');
    expect(cut?.summaryLinesGivenUp).toBeUndefined();
    expect(before).toBeDefined();
  });
});

describe('trimSummaryLines', () => {
  const body = [
    '## Task',
    '- Keep the build green',
    '## Key entities and identifiers',
    '- ORD-1042',
    '## Conversation',
    '- assistant: Looking around the project for a moment.',
    '- read_file(/src/a.ts) → export const a = 1',
    '- excerpt: lorem ipsum dolor sit amet, twice over and over',
    '- excerpt: ticket PAY-77 is open',
    '- excerpt: as read in /src/a.ts',
    '- The build must stay green.',
    '- user: what is left?',
    '- Caroline: we moved to a house by the lake',
    '- excerpt: a longer excerpt of filler text from an old result, to be given up first of all',
  ].join('\n');
  const countText = (text: string) => Math.ceil(text.length / 4);

  it('offers filler excerpts first (largest first), then plain lines; never ids, asks, sections, constraints or a line a person spoke', () => {
    const lines = body.split('\n');
    const offered = droppableSummaryLines(body, countText).map((c) => lines[c.index]);
    expect(offered).toEqual([
      '- excerpt: a longer excerpt of filler text from an old result, to be given up first of all',
      '- excerpt: lorem ipsum dolor sit amet, twice over and over',
      // Its only id stays in the read_file line.
      '- excerpt: as read in /src/a.ts',
      '- assistant: Looking around the project for a moment.',
    ]);
  });

  it('drops the heading of a section it empties, not a title over the next heading', () => {
    const titled = [
      '# Summary',
      '## Older',
      '- excerpt: filler words only',
      '## Newer',
      '- decided: keep it',
    ].join('\n');
    const countSummary = (text: string) => countText(text) + 10;
    const trimmed = trimSummaryLines({
      body: titled,
      tokens: countSummary(titled),
      excess: 4,
      countText,
      countSummary,
    });
    expect(trimmed?.body).toBe(['# Summary', '## Newer', '- decided: keep it'].join('\n'));
  });

  it('gives up as few lines as free the excess, and nothing when all of them would not', () => {
    const countSummary = (text: string) => countText(text) + 10;
    const tokens = countSummary(body);
    const one = trimSummaryLines({ body, tokens, excess: 5, countText, countSummary });
    expect(one?.body.split('\n')).toHaveLength(body.split('\n').length - 1);
    expect(one?.body).not.toMatch(/a longer excerpt/);
    expect(one?.tokens).toBe(countSummary(one!.body));
    expect(trimSummaryLines({ body, tokens, excess: 500, countText, countSummary })).toBeUndefined();
    expect(trimSummaryLines({ body, tokens, excess: 0, countText, countSummary })?.body).toBe(body);
  });
});
