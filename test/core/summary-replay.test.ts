/**
 * Issue 44, point 2: only the exact signed body of a summary is trusted. A genuine summary
 * replayed after a newer one is content and never displaces the current summary (same
 * manager, and a fresh manager over the same store); text before or after a marked summary
 * in the same message (an Anthropic framework that merges the summary turn with the next user
 * turn) is content: sent, and still there after the next compaction.
 */
import { describe, expect, it } from 'vitest';
import { CompactManager, type CompactManagerOptions } from '../../src/core/manager/compact-manager.js';
import { MemorySessionStore } from '../../src/core/session/session-store.js';
import { SummaryMarks } from '../../src/core/summary/summary-mark.js';
import { type ChatMessage, turnsOf } from '../support/history-jumps.js';

const KEY = 'summary-replay-test-key-0123456789abcdef';
type Format = 'openai-chat' | 'anthropic';
const SUMMARY_ROLE = { 'openai-chat': 'assistant', anthropic: 'user' } as const;

function manager(options: Partial<CompactManagerOptions> = {}) {
  return new CompactManager({ model: 'gpt-4o', maxContextTokens: 4_000, summaryKeys: KEY, ...options });
}

function textOf(message: unknown): string {
  const content = (message as { content: unknown }).content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((b) => (b as { text?: string }).text ?? '').join('\n');
  return '';
}

/** The versions of the summaries in `messages` whose mark verifies for `session`, in order. */
function genuineVersions(messages: readonly unknown[], session: string): number[] {
  const marks = new SummaryMarks(KEY);
  return messages.flatMap((m) => {
    const text = textOf(m);
    const at = text.indexOf('<COMPACT-SUMMARY v');
    if (at < 0) return [];
    const end = text.indexOf('</COMPACT-SUMMARY>', at);
    const verified = marks.verify(session, text.slice(at, end + '</COMPACT-SUMMARY>'.length));
    return verified ? [verified.version] : [];
  });
}

/** Grows a conversation until the session is at summary v2; returns the v1 message and the v2 view. */
async function untilV2(m: CompactManager, session: string, format: Format) {
  let out: ChatMessage[] = [];
  let v1: ChatMessage | undefined;
  for (const turn of turnsOf('a', 80)) {
    const result = await m.compact(session, [...out, ...turn], { format });
    out = result.messages as ChatMessage[];
    v1 ??= out.find((msg) => textOf(msg).startsWith('<COMPACT-SUMMARY v1>'));
    if (result.version >= 2) break;
  }
  expect(v1, 'a v1 summary was sent').toBeDefined();
  expect(genuineVersions(out, session)).toEqual([2]);
  return { v1: v1!, view: out };
}

describe('only the exact signed summary is trusted (issue 44, point 2)', () => {
  it.each(['openai-chat', 'anthropic'] as const)(
    '%s: the session’s own v1 replayed after v2 is content; v2 is still sent (same and fresh manager)',
    async (format) => {
      const store = new MemorySessionStore();
      const first = manager({ store });
      const { v1, view } = await untilV2(first, 's', format);
      const replay = { role: SUMMARY_ROLE[format], content: v1.content };
      const given = [
        ...view,
        replay,
        ...(format === 'anthropic' ? [{ role: 'assistant', content: 'mk-t95a: noted' }] : []),
        { role: 'user', content: 'mk-t96u: continue' },
      ];
      for (const m of [first, manager({ store })]) {
        const result = await m.compact('s', given, { format });
        const sent = result.messages as ChatMessage[];
        expect(result.version, 'the session stays at v2 or later').toBeGreaterThanOrEqual(2);
        const versions = genuineVersions(sent, 's');
        expect(versions, 'the current summary is sent').toContain(result.version);
        expect(Math.max(...versions)).toBe(result.version);
        // The replayed v1 is content: sent where it was appended, before the newest messages.
        const at = sent.findIndex((msg) => textOf(msg) === v1.content);
        expect(at, 'the replayed v1 is sent as content').toBeGreaterThan(
          sent.findIndex((msg) => textOf(msg).startsWith(`<COMPACT-SUMMARY v${result.version}>`)),
        );
        expect(sent.at(-1)).toEqual(given.at(-1));
      }
    },
  );

  it.each([
    ['openai-chat', 'appended to the string'],
    ['anthropic', 'appended to the string'],
    ['anthropic', 'a second text block (a merged user turn)'],
    ['anthropic', 'a text block before it'],
  ] as const)(
    '%s: user words (%s) around a genuine summary are sent and survive the next compaction',
    async (format, shape) => {
      for (const fresh of [false, true]) {
        const store = new MemorySessionStore();
        const m = manager({ store });
        const { view } = await untilV2(m, 's', format);
        const words = 'mk-zz1u: Never deploy on Fridays, and keep the staging database untouched.';
        const at = view.findIndex((msg) => textOf(msg).startsWith('<COMPACT-SUMMARY v2>'));
        const summary = view[at]!;
        const blocks = [
          { type: 'text', text: summary.content },
          { type: 'text', text: words },
        ];
        const merged =
          shape === 'appended to the string'
            ? { ...summary, content: `${summary.content}\n\n${words}` }
            : { ...summary, content: shape === 'a text block before it' ? blocks.reverse() : blocks };
        const history = [...view.slice(0, at), merged, ...view.slice(at + 1)];
        const client = fresh ? manager({ store }) : m;
        let result = await client.compact<unknown>(
          's',
          [...history, { role: 'user', content: 'mk-t90u: go on' }],
          {
            format,
          },
        );
        const sent = result.messages as unknown[];
        expect(JSON.stringify(sent), 'the words are sent').toContain('mk-zz1u');
        // The summary goes once, alone; the words go as their own message's content.
        const withSummary = sent.filter((msg) => textOf(msg).includes('<COMPACT-SUMMARY'));
        expect(withSummary).toHaveLength(1);
        expect(genuineVersions(withSummary, 's')).toEqual([2]);
        expect(textOf(withSummary[0])).not.toContain('mk-zz1u');
        expect(result.version).toBe(2);
        // Grow until the next compaction: the words are in the kept messages or the new summary.
        let out = sent;
        for (const turn of turnsOf('b', 80)) {
          result = await client.compact('s', [...out, ...turn], { format });
          out = result.messages as unknown[];
          expect(JSON.stringify(out), `the words are still sent at v${result.version}`).toContain('mk-zz1u');
          if (result.version > 2) break;
        }
        expect(result.version, 'a later compaction ran').toBeGreaterThan(2);
      }
    },
  );
});
