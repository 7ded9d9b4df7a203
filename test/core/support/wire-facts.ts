/**
 * An independent reading of the three wire formats (calls, results, text, role) and of what
 * must stay pinned, used to check the manager's output without relying on its own codecs.
 */
import type { WireFormat } from './session-model.js';

/** What a wire message means, read independently of the library's codecs. */
export interface WireFacts {
  calls: string[];
  results: string[];
  text: string;
  reasoning: boolean;
  role: string;
}

function partsText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((p) =>
      typeof p === 'string'
        ? p
        : p && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string'
          ? (p as { text: string }).text
          : '',
    )
    .join('\n');
}

/** Reads calls, results and text of one wire message. */
export function wireFacts(format: WireFormat, message: unknown): WireFacts {
  const m = message as Record<string, unknown>;
  if (format === 'openai-chat') {
    const calls = Array.isArray(m.tool_calls) ? (m.tool_calls as { id: string }[]).map((c) => c.id) : [];
    const results = m.role === 'tool' ? [String(m.tool_call_id)] : [];
    return { calls, results, text: partsText(m.content), reasoning: false, role: String(m.role) };
  }
  if (format === 'openai-responses') {
    const type = m.type ?? 'message';
    if (type === 'function_call')
      return { calls: [String(m.call_id)], results: [], text: '', reasoning: false, role: 'assistant' };
    if (type === 'function_call_output')
      return { calls: [], results: [String(m.call_id)], text: '', reasoning: false, role: 'tool' };
    if (type === 'reasoning') return { calls: [], results: [], text: '', reasoning: true, role: 'assistant' };
    if (type === 'message')
      return { calls: [], results: [], text: partsText(m.content), reasoning: false, role: String(m.role) };
    return { calls: [], results: [], text: '', reasoning: false, role: 'assistant' };
  }
  const calls: string[] = [];
  const results: string[] = [];
  if (Array.isArray(m.content)) {
    for (const block of m.content as Record<string, unknown>[]) {
      if (block.type === 'tool_use') calls.push(String(block.id));
      if (block.type === 'tool_result') results.push(String(block.tool_use_id));
    }
  }
  return { calls, results, text: partsText(m.content), reasoning: false, role: String(m.role) };
}

/** The summary marker every summary message's text starts with. */
export const SUMMARY_PREFIX = '<COMPACT-SUMMARY v';

/** A copy without `meta` (what the provider should receive). */
export function withoutMeta(message: unknown): unknown {
  if (message === null || typeof message !== 'object' || !('meta' in message)) return message;
  const { meta: _meta, ...rest } = message as Record<string, unknown>;
  return rest;
}

/** Recursively freezes a value (the manager must never mutate the caller's input). */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}

/** The pinned messages of a raw history: never-prune roles, protected ones, and their whole tool groups. */
export function pinnedIndices(
  format: WireFormat,
  raw: readonly unknown[],
  rolesNeverPrune: readonly string[],
): Set<number> {
  const facts = raw.map((m) => wireFacts(format, m));
  const pinned = new Set<number>();
  raw.forEach((m, i) => {
    const meta = (m as { meta?: { protected?: unknown } }).meta;
    if (rolesNeverPrune.includes(facts[i]!.role) || meta?.protected === true) pinned.add(i);
  });
  const direct = new Set(pinned);
  const ids = new Set<string>();
  let changed = true;
  while (changed) {
    changed = false;
    for (const i of pinned) for (const id of [...facts[i]!.calls, ...facts[i]!.results]) ids.add(id);
    facts.forEach((f, i) => {
      if (!pinned.has(i) && [...f.calls, ...f.results].some((id) => ids.has(id))) {
        pinned.add(i);
        changed = true;
      }
    });
    // A model turn (reasoning, text, calls) and the results that answer it are pinned whole.
    // (Pinned plain text, with no calls, results or reasoning, pins only itself.)
    const active = (i: number) =>
      (facts[i]!.reasoning && direct.has(i)) || facts[i]!.calls.length > 0 || facts[i]!.results.length > 0;
    for (const round of modelRounds(facts)) {
      // Reasoning right before a pinned message stays with it.
      for (let k = round.length - 1; k > 0; k--) {
        const i = round[k]!;
        const prev = round[k - 1]!;
        if (pinned.has(i) && !pinned.has(prev) && facts[prev]!.reasoning && prev === i - 1) {
          pinned.add(prev);
          changed = true;
        }
      }
      if (round.some((i) => pinned.has(i) && active(i)) && round.some((i) => !pinned.has(i))) {
        for (const i of round) pinned.add(i);
        changed = true;
      }
    }
  }
  return pinned;
}

/**
 * Rounds, computed independently of the library: a round opens at a model-side entry (an
 * assistant message or item, a reasoning item) that follows anything else, takes the
 * model-side entries after it, then the tool results that follow.
 */
function modelRounds(facts: readonly ReturnType<typeof wireFacts>[]): number[][] {
  const rounds: number[][] = [];
  let current: number[] | undefined;
  let inModel = false;
  facts.forEach((f, i) => {
    const modelSide = f.reasoning || (f.role === 'assistant' && f.results.length === 0);
    if (modelSide) {
      if (!inModel) {
        current = [];
        rounds.push(current);
      }
      inModel = true;
      current!.push(i);
    } else if (f.results.length > 0 && current) {
      inModel = false;
      current.push(i);
    } else {
      inModel = false;
      current = undefined;
    }
  });
  return rounds;
}
