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
  README_FACTS as FACTS,
  README_SECTIONS as SECTIONS,
} from '../fixtures/early-instruction/pasted-readme.js';

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
    const messages: Record<string, unknown>[] = [
      { role: 'system', content: 'You are a coding agent.' },
      { role: 'user', content: first },
    ];
    let compactions = 0;
    manager.on('compact.pruned_messages', () => compactions++);
    const lost: string[] = [];
    try {
      for (let r = 1; r <= 150; r++) {
        const id = `call_${r}`;
        const call = {
          name: 'read_file',
          arguments: JSON.stringify({ path: `src/module${r % 37}/file${r}.ts` }),
        };
        messages.push({
          role: 'assistant',
          content: `Round ${r}: checking file ${r}.`,
          tool_calls: [{ id, type: 'function', function: call }],
        });
        const code = `  // processes batch ${r} with retry ${r % 5}\n  return process(event, ${r});\n}\n`;
        messages.push({
          role: 'tool',
          tool_call_id: id,
          content: `export function handler${r}(event) {\n${code.repeat(20)}`,
        });
        if (r % 40 === 0)
          messages.push({ role: 'user', content: `Keep going, look at module ${r % 37} next.` });
        const sent = JSON.stringify((await manager.compact('early', messages)).messages);
        for (const instruction of ['Always answer in French.', 'Never modify files under vendor/.'])
          if (!sent.includes(instruction)) lost.push(`round ${r}: ${instruction}`);
      }
    } finally {
      await manager.shutdown();
    }
    expect(compactions, 'the session compacts many times').toBeGreaterThanOrEqual(10);
    expect(lost).toEqual([]);
  });
});
