/** What the fidelity runs measure in a compacted context: facts present, and a same-size sliding window. */
import type { FidelitySession, KeyFact } from './planted-session.js';

/** Lowercases and collapses whitespace (facts are matched this way). */
export const normalize = (text: string) => text.replace(/\s+/g, ' ').toLowerCase();

/** All the text a model would read in a list of wire messages (contents, tool calls, tool results). */
export function contextText(messages: readonly unknown[]): string {
  const parts: string[] = [];
  const skip = new Set(['role', 'type', 'id', 'tool_call_id', 'call_id', 'tool_use_id']);
  const walk = (value: unknown, key: string) => {
    if (typeof value === 'string') {
      if (!skip.has(key)) parts.push(value);
    } else if (Array.isArray(value)) {
      for (const item of value) walk(item, key);
    } else if (value && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) walk(v, k);
    }
  };
  walk(messages, '');
  return parts.join('\n');
}

/** True when every probe of the fact is in the (normalized) context text. */
export function factPresent(fact: KeyFact, normalizedContext: string): boolean {
  return fact.probes.every((probe) => normalizedContext.includes(normalize(probe)));
}

/**
 * A sliding window of the same size: the system messages plus the longest tail of the
 * other messages whose estimate stays within `tokens` (a tail never opens on a tool result).
 */
export function slidingWindow(
  messages: readonly Record<string, unknown>[],
  tokens: number,
  estimate: (messages: Record<string, unknown>[]) => number,
): Record<string, unknown>[] {
  const pinned = messages.filter((m) => m.role === 'system' || m.role === 'developer');
  const rest = messages.filter((m) => m.role !== 'system' && m.role !== 'developer');
  const fits = (start: number) => estimate([...pinned, ...rest.slice(start)]) <= tokens;
  let low = 0;
  let high = rest.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (fits(mid)) high = mid;
    else low = mid + 1;
  }
  let start = low;
  while (start < rest.length && rest[start]!.role === 'tool') start++;
  return [...pinned, ...rest.slice(start)];
}

/** Counts what a run kept: facts in the compacted context, in the window, among the folded messages. */
export function tally(
  session: FidelitySession,
  output: readonly unknown[],
  window: readonly unknown[],
  folded: (index: number) => boolean,
) {
  const text = normalize(contextText(output));
  const windowText = normalize(contextText(window));
  const missing: string[] = [];
  let retained = 0;
  let summarizedFacts = 0;
  let retainedSummarized = 0;
  let windowRetained = 0;
  for (const fact of session.facts) {
    const present = factPresent(fact, text);
    if (present) retained++;
    else missing.push(fact.probes.join(' + '));
    if (factPresent(fact, windowText)) windowRetained++;
    if (folded(fact.messageIndex)) {
      summarizedFacts++;
      if (present) retainedSummarized++;
    }
  }
  return { retained, summarizedFacts, retainedSummarized, windowRetained, missing };
}
