/**
 * Issue 45, point 3: in a chat between people (two `Name:` speakers, no tool call) summarized
 * by the built-in summarizer, the summary keeps its previous size up to the target (past
 * `maxSummaryTokens`): the room goes to the summary, which holds the facts at several times
 * the density of the verbatim turns.
 */
import { describe, expect, it } from 'vitest';
import { tokenCounterFor } from '../../src/core/counting/token-counter.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { DEFAULT_POLICY } from '../../src/core/policy.js';
import { isPeopleChat } from '../../src/core/preflight/cascade/people-chat.js';
import { planPolicy } from '../../src/core/preflight/cascade/plan-summary.js';
import type { ViewEntry } from '../../src/core/preflight/session-view.js';

const PLACES = [
  'Lisbon',
  'Oslo',
  'Kyoto',
  'Denver',
  'Porto',
  'Quito',
  'Tallinn',
  'Hobart',
  'Zurich',
  'Perth',
];
const NAMES = ['Marta', 'Jonas', 'Aiko', 'Rafael', 'Ines', 'Tomas', 'Greta', 'Nils', 'Ada', 'Leon'];

/** A chat between Ann (user) and Bob (assistant): one fact and some small talk per turn. */
function peopleChat(turns: number): Record<string, unknown>[] {
  const messages: Record<string, unknown>[] = [];
  for (let i = 0; i < turns; i++) {
    const place = PLACES[i % PLACES.length]!;
    const name = NAMES[(i * 3) % NAMES.length]!;
    messages.push({
      role: 'user',
      content: `Ann: Guess what, on trip ${i} I flew to ${place} with my cousin ${name} and we bought ${i + 3} ceramic bowls. It was so much fun, honestly!`,
    });
    messages.push({
      role: 'assistant',
      content: `Bob: That sounds great, Ann! Last week I repaired bicycle number ${100 + i} for ${name}'s neighbour. Hope you had a good time!`,
    });
  }
  return messages;
}

/** The largest summary (in tokens) of a chat compacted after every message. */
async function rolling(messages: Record<string, unknown>[], maxSummaryTokens: number) {
  const manager = new CompactManager({
    model: 'gpt-4o',
    maxContextTokens: 3000,
    redaction: false,
    policy: { maxSummaryTokens },
  });
  const counter = tokenCounterFor('gpt-4o');
  const history: Record<string, unknown>[] = [];
  let largest = 0;
  let summaries = 0;
  for (const message of messages) {
    history.push(message);
    const result = await manager.compact('people', history);
    if (!result.summary) continue;
    summaries++;
    largest = Math.max(largest, counter.countText(result.summary.text));
  }
  await manager.shutdown();
  return { largest, summaries };
}

function entry(message: Record<string, unknown>): ViewEntry {
  const toolCalls = (message.tool_calls as unknown[] | undefined) ?? [];
  return {
    item: {
      entry: {
        parsed: { role: message.role, text: String(message.content ?? ''), toolCalls, toolResults: [] },
      },
    },
  } as unknown as ViewEntry;
}

describe('a chat between people gives its room to the summary', () => {
  it('tells a chat between named people from an agent transcript and a one-speaker chat', () => {
    const chat = peopleChat(4).map(entry);
    expect(isPeopleChat(chat, undefined)).toBe(true);
    // A tool call anywhere, or a tool line in the previous summary: an agent's transcript.
    const call = entry({ role: 'assistant', content: '', tool_calls: [{ id: 'c1' }] });
    expect(isPeopleChat([...chat, call], undefined)).toBe(false);
    expect(isPeopleChat(chat, '## 8 May 2023\n- lookup(id="A1") → found')).toBe(false);
    const alone = chat.filter((e) => e.item.entry.parsed.role === 'user');
    expect(isPeopleChat(alone, undefined)).toBe(false);
    expect(
      isPeopleChat(
        peopleChat(4).map((m) => entry({ ...m, content: 'no names here' })),
        undefined,
      ),
    ).toBe(false);
  });

  it('lifts the summary limit to the target, only in a people chat', () => {
    const input = { policy: { ...DEFAULT_POLICY, maxSummaryTokens: 256 }, force: false, summaryTokens: 0 };
    expect(planPolicy(input, 1500)).toBe(input.policy);
    expect(planPolicy({ ...input, people: true }, 1500)).toMatchObject({
      maxSummaryTokens: 1500,
      userTextShare: DEFAULT_POLICY.userTextShare,
    });
    expect(planPolicy({ ...input, people: true }, 100)).toBe(input.policy);
  });

  it('rolling in a 3k window, the summary grows past maxSummaryTokens', async () => {
    const { largest, summaries } = await rolling(peopleChat(80), 256);
    expect(summaries).toBeGreaterThan(3);
    // The old plan kept the summary near its 256-token limit and the suffix grew back over the room.
    expect(largest).toBeGreaterThan(2 * 256);
  });
});
