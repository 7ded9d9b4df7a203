/**
 * Real public agent transcripts (SWE-agent, MIT, vendored in test/fixtures/transcripts)
 * squeezed into windows from 2k to 32k tokens, grown one message per preflight as an agent
 * loop does: every request is sound, under the budget by an independent count (a fresh
 * manager with no caches), starts with the system prompt and ends with the newest message
 * verbatim. The same runs again with tool-call ids reused every turn (`call_0`), as local
 * model servers number them.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { memoryStorage } from '../../src/index.js';
import { checkOutput } from './support/check-output.js';

type ChatMessage = Record<string, unknown> & {
  role: string;
  tool_calls?: { id: string }[];
  tool_call_id?: string;
};

const NAMES = ['ctf', 'marshmallow', 'pydicom'] as const;
const WINDOWS = [2_000, 4_000, 8_000, 16_000, 32_000];

function load(name: string): ChatMessage[] {
  return JSON.parse(readFileSync(`test/fixtures/transcripts/swe-agent-${name}.json`, 'utf8'));
}

/** The same conversation with ids numbered per turn: `call_0`, `call_1` in every turn. */
function reuseIds(messages: readonly ChatMessage[]): ChatMessage[] {
  let map = new Map<string, string>();
  return messages.map((message) => {
    if (message.tool_calls) {
      map = new Map();
      const calls = message.tool_calls.map((call, k) => {
        map.set(call.id, `call_${k}`);
        return { ...call, id: `call_${k}` };
      });
      return { ...message, tool_calls: calls };
    }
    if (message.role === 'tool') return { ...message, tool_call_id: map.get(message.tool_call_id!) ?? '' };
    return message;
  });
}

/** Positional check: each tool message answers an unanswered call of the assistant turn right before it. */
function assertPositionalPairs(output: readonly ChatMessage[]): void {
  let open: string[] | undefined;
  output.forEach((message, k) => {
    if (message.role === 'tool') {
      const at = open?.indexOf(message.tool_call_id!) ?? -1;
      if (!open || at < 0) throw new Error(`output[${k}] answers no open call (${message.tool_call_id})`);
      open.splice(at, 1);
      return;
    }
    if (open && open.length > 0) throw new Error(`output[${k}]: calls ${open.join(', ')} left unanswered`);
    open = message.tool_calls?.map((call) => call.id);
  });
}

/** Whether every call of the last assistant turn with tool calls has its tool message. */
function lastRoundAnswered(history: readonly ChatMessage[]): boolean {
  const at = history.findLastIndex((m) => m.role === 'assistant' && (m.tool_calls?.length ?? 0) > 0);
  if (at < 0) return true;
  return history.length - 1 - at >= history[at]!.tool_calls!.length;
}

describe('real transcripts squeezed into small windows', () => {
  for (const name of NAMES) {
    for (const reused of [false, true]) {
      it(`${name}${reused ? ' (ids reused per turn)' : ''}: every request from 2k to 32k is sound and under budget`, async () => {
        const source = load(name);
        const messages = reused ? reuseIds(source) : source;
        // The id-based invariant checker needs unique ids (SWE-agent itself repeats some).
        const callIds = messages.flatMap((m) => m.tool_calls?.map((c) => c.id) ?? []);
        const uniqueIds = new Set(callIds).size === callIds.length;
        for (const window of WINDOWS) {
          const manager = new CompactManager({
            model: 'gpt-4o',
            maxContextTokens: window,
            storage: memoryStorage(),
          });
          const fresh = () => new CompactManager({ model: 'gpt-4o', maxContextTokens: window });
          let compactions = 0;
          let cuts = 0;
          manager.on('compact.pruned_messages', () => compactions++);
          for (let n = 2; n <= messages.length; n++) {
            const history = messages.slice(0, n);
            // Only what a model call is sent: every call of the last round answered.
            if (!lastRoundAnswered(history)) continue;
            const output = (await manager.preflight(`${name}-${window}`, history)) as ChatMessage[];
            const where = `${name} window ${window}, ${n} messages`;
            expect(fresh().estimate(output).total, where).toBeLessThanOrEqual(manager.budget);
            expect(output[0], where).toEqual(messages[0]);
            // The newest message goes out verbatim, or cut around a marker when it alone
            // does not fit (the archive keeps the whole).
            const last = output.at(-1)!;
            if (JSON.stringify(last) !== JSON.stringify(history.at(-1))) {
              expect(JSON.stringify(last), where).toMatch(/\[agent-compaction: [^\]]*cut/);
              expect(last.role).toBe(history.at(-1)!.role);
              cuts++;
            }
            assertPositionalPairs(output);
            if (uniqueIds && !history.at(-1)!.tool_calls)
              checkOutput({
                format: 'openai-chat',
                raw: history,
                output,
                rolesNeverPrune: ['system', 'developer'],
              });
          }
          const total = fresh().estimate(messages).total;
          if (total > 0.85 * window) expect(compactions, `${name} window ${window}`).toBeGreaterThan(0);
          // Only the smallest windows need cuts.
          if (window >= 16_000) expect(cuts, `${name} window ${window}`).toBe(0);
          await manager.shutdown();
        }
      });
    }
  }
});
