/**
 * Found by the property test through every integration (test/integrations/sound-requests-
 * property.test.ts, issue 78 review): a system prompt of half the window, one user message of
 * instructions, then tool rounds of outputs from 2% to 24% of the window. Once the history was
 * summarized, the last resort cut the user's message head and tail ("probe every host, one at
 * a time, [cut] ...": the rest of the instructions lost) while the summary kept its filler
 * excerpts of old results. The user's own words now go with the newest: cut only when the
 * summary's least valued lines do not make room for them.
 */
import { describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { outputOf, userText } from '../support/sound-paths.js';

const WINDOW = 8_000;
const RULES = Array.from(
  { length: 261 },
  (_, k) => `Rule ${k}: always follow the house style and keep every answer short.`,
);
const SYSTEM = `You are an SRE agent; never restart a host. ${RULES.join(' ')}`;
const INSTRUCTIONS = userText('ai generate', 60);

/**
 * The instructions, then `steps` tool rounds; outputs sweep 2% to 24% of the window. At 10
 * rounds the newest (24%) leaves no room even once the summary gave up every line it can
 * spare: the instructions are cut then, as the newest would be.
 */
function history(steps: number): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [{ role: 'user', content: INSTRUCTIONS }];
  for (let step = 0; step < steps; step++) {
    const id = `call_${step}`;
    const pct = 2 + ((5 + step * 7) % 23);
    out.push({
      role: 'assistant',
      content: null,
      tool_calls: [{ id, type: 'function', function: { name: 'probe', arguments: `{"step":${step}}` } }],
    });
    out.push({ role: 'tool', tool_call_id: id, content: outputOf(`out${step}`, (pct * WINDOW) / 100) });
  }
  return out;
}

describe("the user's words beside the summary", () => {
  it('keeps the instructions whole while the summary gives up excerpts for the newest', async () => {
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: WINDOW });
    let reached = 0;
    manager.on('compact.reduction', (event) => {
      if ((event.properties.summaryLinesGivenUp ?? 0) > 0) reached++;
    });
    const instructionsCut: number[] = [];
    for (let steps = 1; steps <= 9; steps++) {
      const result = await manager.compact('words', history(steps), { system: SYSTEM, replyTokens: 1200 });
      expect(result.tokensAfter).toBeLessThanOrEqual(result.budget);
      const first = result.messages[0] as { role: string; content: string };
      if (first.role !== 'user' || first.content !== INSTRUCTIONS) instructionsCut.push(steps);
    }
    await manager.shutdown();
    // The summary gave up lines for the newest (cut_oversized's summaryLinesGivenUp).
    expect(reached).toBeGreaterThan(0);
    expect(instructionsCut).toEqual([]);
  });
});
