/**
 * Helpers of the CompactManager tests (src/core/manager/compact-manager*.test.ts): a counter of
 * one token per character, chat and tool-call histories, event collection.
 */
import type { TokenCounter } from '../../src/core/counting/token-counter.js';
import type { AnyCompactEvent } from '../../src/core/events/events.js';
import type { CompactManager } from '../../src/core/manager/compact-manager.js';
import type { CompactMessage } from '../../src/core/messages/message.js';

/** One token per character of content: makes thresholds exact in tests. */
export const charCounter: TokenCounter = {
  name: 'chars',
  exact: true,
  requestOverhead: 0,
  countText: (text) => text.length,
  countMessage: (m: CompactMessage) =>
    m.text.length +
    m.toolCalls.reduce((s, c) => s + c.name.length + c.arguments.length, 0) +
    m.toolResults.reduce((s, r) => s + r.output.length, 0),
  countTools: (tools) => JSON.stringify(tools).length,
};

export function chatTurns(n: number, size = 100): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (let i = 0; i < n; i++) {
    out.push({ role: 'user', content: `Q${i} `.padEnd(size, 'q') });
    out.push({ role: 'assistant', content: `A${i} `.padEnd(size, 'a') });
  }
  return out;
}

/**
 * `n` turns with a tool call each (a question, the call, its output of `outputChars`
 * characters, an answer), so compactions clear tool results (artifacts) and summarize.
 */
export function toolTurns(n: number, seed: string, outputChars = 120): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (let i = 0; i < n; i++) {
    out.push({ role: 'user', content: `${seed} question ${i} `.padEnd(80, 'q') });
    out.push({
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: `call_${i}`, type: 'function', function: { name: 'read', arguments: `{"i":${i}}` } },
      ],
    });
    out.push({
      role: 'tool',
      tool_call_id: `call_${i}`,
      content: `${seed} output ${i} `.padEnd(outputChars, 'o'),
    });
    out.push({ role: 'assistant', content: `${seed} answer ${i} `.padEnd(60, 'a') });
  }
  return out;
}

export function collect(manager: CompactManager): AnyCompactEvent[] {
  const events: AnyCompactEvent[] = [];
  manager.on('*', (e) => events.push(e as AnyCompactEvent));
  return events;
}

export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

export const summaryCount = (messages: unknown[]) =>
  messages.filter((m) => JSON.stringify(m).includes('<COMPACT-SUMMARY v')).length;
