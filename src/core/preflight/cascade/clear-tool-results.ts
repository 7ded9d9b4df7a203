/**
 * Cascade level a: clear old tool results. Outside the most recent ones, a tool result's
 * content becomes a one-line placeholder naming the tool, its size and the archive
 * reference; the call/result structure stays. Oldest first: every one of them when the policy
 * is `cacheAware` (the prompt is rewritten from the first cleared result anyway), else until
 * the request is under the target. Once cleared, a result keeps the same placeholder on every
 * later call.
 */
import type { Positional } from '../../chunked-list.js';
import type { IndexedMessage } from '../../messages/message-index.js';
import type { ToolPairer } from '../../messages/tool-pairing.js';
import { runSteps, type Steps } from '../../time-slice.js';
import {
  forgetReadIds,
  READ_IDS_AHEAD_CHARS,
  readPlaceholderIdsSteps,
  rewriteRef,
  toolNameOf,
} from '../view/realize-rewrite.js';
import { applyRewrite, type CascadeRun, type LevelReport } from './cascade-types.js';

/** Clears old tool results of `run` (all of them, or until it is under its target). */
export function clearToolResults(
  run: CascadeRun,
  pairing: { pairer: ToolPairer; items: Positional<IndexedMessage> },
): LevelReport {
  return runSteps(clearToolResultSteps(run, pairing));
}

/** Entries looked at between two steps of the first pass of {@link clearToolResultSteps}. */
const STEP_ENTRIES = 512;

/** {@link clearToolResults} as {@link Steps}: a pause after each result looked at. */
export function* clearToolResultSteps(
  run: CascadeRun,
  pairing: { pairer: ToolPairer; items: Positional<IndexedMessage> },
): Steps<LevelReport> {
  const report: LevelReport = { level: 'clear_tool_results', count: 0, tokensSaved: 0, refs: [] };
  const { policy } = run;
  const resultEntries: number[] = [];
  // The pass over every entry yields too (20k entries in one step held the loop, issue 47).
  for (let k = 0; k < run.entries.length; k++) {
    if (k % STEP_ENTRIES === STEP_ENTRIES - 1) yield;
    const entry = run.entries[k]!;
    if (!entry.pinned && entry.item.entry.parsed.toolResults.length > 0) resultEntries.push(k);
  }
  const lastRound = run.entries.at(-1)?.round ?? -1;
  const candidates = resultEntries.slice(0, Math.max(0, resultEntries.length - policy.clearKeepRecent));
  const excluded = new Set(policy.clearExcludeTools);
  for (const k of candidates) {
    if (!policy.cacheAware && run.total <= run.target) break;
    yield;
    const entry = run.entries[k]!;
    if (entry.rewrite || entry.tokens < policy.clearMinTokens) continue;
    if (entry.round >= 0 && entry.round === lastRound) continue;
    const names = clearableNames(entry.item, pairing, excluded);
    if (!names) continue;
    for (const result of entry.item.entry.parsed.toolResults)
      if (result.output.length >= READ_IDS_AHEAD_CHARS) yield* readPlaceholderIdsSteps(result.output);
    try {
      clearEntry(run, k, names, report);
    } finally {
      forgetReadIds();
    }
  }
  return report;
}

/** The tools whose results `item` holds, or undefined when one of them may not be cleared. */
export function clearableNames(
  item: IndexedMessage,
  pairing: { pairer: ToolPairer; items: Positional<IndexedMessage> },
  excluded: ReadonlySet<string>,
): string[] | undefined {
  const names = item.entry.parsed.toolResults.map((_, position) =>
    toolNameOf(item, position, pairing.pairer, pairing.items),
  );
  return names.some((name) => excluded.has(name)) ? undefined : names;
}

/** Clears the results of entry `k` of `run` (a placeholder with its recall ref), noted in `report`. */
export function clearEntry(run: CascadeRun, k: number, names: readonly string[], report: LevelReport): void {
  const item = run.entries[k]!.item;
  const ref = rewriteRef('cleared', item.id);
  // With its message's hash: the state's record is this object, not a copy (next-state.ts).
  const saved = applyRewrite(run, k, { kind: 'cleared', ref, hash: item.entry.hash }, names.join(', '));
  if (saved <= 0) return;
  report.count++;
  report.tokensSaved += saved;
  report.refs.push(ref);
}
