/**
 * review-85b: an instruction in the middle of a long first user message (a pasted README of
 * ~1,700 tokens with "Always answer in French." in it) reaches the model in every request of a
 * 150-round tool session in an 8k window (20 compactions by the built-in summarizer). The task
 * quote holds the message's first 700 characters; the sentence beyond it (log-odds 1.95, under
 * the head threshold 2) was a conversation line, gone from round 145 on.
 */
import { describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import {
  batchFileRound,
  README_FACTS as FACTS,
  README_SECTIONS as SECTIONS,
} from '../fixtures/early-instruction/pasted-readme.js';
import { charCounter, chatTurns, GatedSummarizer } from '../support/background-fixtures.js';

/** A README of ~1,700 tokens with the user's two instructions pasted in its middle. */
function firstMessage(): string {
  const parts: string[] = [];
  let k = 0;
  for (const [s, title] of SECTIONS.entries()) {
    if (s === 5) parts.push('Always answer in French. Never modify files under vendor/.');
    const body = Array.from({ length: 6 }, (_, j) => FACTS[(k++ * 7 + j) % FACTS.length]).join(' ');
    parts.push(`## ${title}\n\n${body}`);
  }
  return `Here is our README, read it before you start:\n\n# ingest-service\n\n${parts.join('\n\n')}\n\nPlease fix the flaky batching test in test/integration/batch.test.ts.`;
}

describe('an instruction inside a long first user message', () => {
  it('is in every request of 150 tool rounds through 20 compactions (review-85b)', async () => {
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 8_000 });
    const first = firstMessage();
    expect(manager.estimate([{ role: 'user', content: first }]).total).toBeGreaterThan(1_500);
    try {
      const { lost, compactions } = await roundsLosing(
        manager,
        [
          { role: 'system', content: 'You are a coding agent.' },
          { role: 'user', content: first },
        ],
        ['Always answer in French.', 'Never modify files under vendor/.'],
      );
      expect(compactions, 'the session compacts many times').toBeGreaterThanOrEqual(10);
      expect(lost).toEqual([]);
    } finally {
      await manager.shutdown();
    }
  });
});

/** The summary message's `## User instructions` lines in a compacted request (none without one). */
function userInstructions(sent: readonly unknown[]): string[] {
  const text = JSON.stringify(sent.find((m) => JSON.stringify(m).includes('COMPACT-SUMMARY')) ?? '');
  const body = (JSON.parse(text || '""') as { content?: unknown }).content;
  const summary = typeof body === 'string' ? body : JSON.stringify(body ?? '');
  const section = /## User instructions\n([\s\S]*?)(?:\n## |\n<\/COMPACT-SUMMARY|$)/.exec(summary)?.[1] ?? '';
  return section.split('\n').filter((line) => line.startsWith('- '));
}

/** 150 `read_file` rounds after `first`, compacting before each; the rounds whose request lacks an instruction. */
async function roundsLosing(
  manager: CompactManager,
  head: Record<string, unknown>[],
  instructions: readonly string[],
): Promise<{ lost: string[]; compactions: number }> {
  const messages = [...head];
  let compactions = 0;
  manager.on('compact.pruned_messages', () => compactions++);
  const lost: string[] = [];
  for (let r = 1; r <= 150; r++) {
    messages.push(...batchFileRound(r));
    if (r % 40 === 0) messages.push({ role: 'user', content: `Keep going, look at module ${r % 37} next.` });
    const sent = JSON.stringify((await manager.compact('early', messages)).messages);
    for (const instruction of instructions)
      if (!sent.includes(instruction)) lost.push(`round ${r}: ${instruction}`);
  }
  return { lost, compactions };
}

describe('an instruction given once early, the first fold holding the opening message alone (review-86d)', () => {
  it('is in every request of 150 tool rounds in a 4k window (the system prompt pinned, not folded)', async () => {
    // The first compaction folds the opening message alone: no tool call in the span yet, the
    // system prompt pinned. The fold was read as said to a person, its instructions a
    // conversation line, lost from round 51 (vendor) and 83 (French).
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 4_000 });
    try {
      const { lost, compactions } = await roundsLosing(
        manager,
        [
          { role: 'system', content: 'You are a coding agent.' },
          { role: 'user', content: firstMessage() },
        ],
        ['Always answer in French.', 'Never modify files under vendor/.'],
      );
      expect(compactions, 'the session compacts many times').toBeGreaterThanOrEqual(10);
      expect(lost).toEqual([]);
    } finally {
      await manager.shutdown();
    }
  });
});

/** A chat of `turns` short turns, the imperative in the middle, said by the user-side speaker. */
function chatWith(imperative: string): Record<string, unknown>[] {
  const messages: Record<string, unknown>[] = [];
  for (let t = 0; t < 60; t++) {
    const user =
      t === 30
        ? `I want to practise before the trip. ${imperative}`
        : `Day ${t}: the garden has ${t + 3} tomatoes now and the cat sleeps on the porch.`;
    messages.push({ role: 'user', content: user });
    messages.push({
      role: 'assistant',
      content: `Nice, mine has ${t + 1} peppers, and the dog barked at the mailman ${t % 4} times.`,
    });
  }
  return messages;
}

describe('who the imperative is said to (review-86d)', () => {
  const imperative = 'Always answer me in French from now on.';
  it('a chat between people (no system prompt, no tools): small talk, not a user instruction', async () => {
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 4_000 });
    try {
      const out = await manager.compact('chat', chatWith(imperative), { force: true });
      expect(JSON.stringify(out.messages)).toContain('COMPACT-SUMMARY');
      expect(userInstructions(out.messages).join('\n')).not.toContain('French');
    } finally {
      await manager.shutdown();
    }
  });

  for (const [name, messages, options] of [
    [
      'a pinned system prompt',
      [{ role: 'system', content: 'You are a helpful assistant.' }, ...chatWith(imperative)],
      {},
    ],
    ['a system prompt sent apart', chatWith(imperative), { system: 'You are a helpful assistant.' }],
    [
      'tool definitions',
      chatWith(imperative),
      { tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }] },
    ],
  ] as const)
    it(`the same chat with ${name}, outside the folded span: a user instruction`, async () => {
      const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 4_000 });
      try {
        const out = await manager.compact('chat', messages, { force: true, ...options });
        expect(userInstructions(out.messages).join('\n')).toContain(imperative);
      } finally {
        await manager.shutdown();
      }
    });
});

describe('the background preparation hears what the request shows (review-86d)', () => {
  it('its summarizer is told the request shows an assistant when only the pinned system prompt does', async () => {
    const summarizer = new GatedSummarizer('gated', true);
    const manager = new CompactManager({
      maxContextTokens: 10_000,
      tokenCounter: charCounter,
      summarizer,
      background: true,
      policy: { hardCapBuffer: 500 },
    });
    try {
      // A chat with an assistant whose only sign is the pinned system prompt: the folded
      // turns hold no tool call, no system message.
      const history = [{ role: 'system', content: 'You are a helpful assistant.' }, ...chatTurns(50)];
      for (let n = 30; n <= 38; n++) await manager.preflight('s', history.slice(0, 1 + 2 * n));
      await summarizer.requested();
      const [request] = summarizer.requests;
      expect(request!.messages.some((m) => m.role === 'system')).toBe(false);
      expect(request!.withAssistant).toBe(true);
    } finally {
      await manager.shutdown();
    }
  });
});
