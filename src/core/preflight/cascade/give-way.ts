/**
 * After the summary (issue 34): the recent tool results that `clearKeepRecent` protects give
 * way when they alone keep the request over its target, oldest first. A result larger than
 * what must go is shortened head and tail to land on the target (the view keeps the rest of
 * it); a smaller one is cleared with its recall ref. The latest round and the newest message
 * are never touched (an oversized one is level d's), nor pinned messages or `clearExcludeTools`.
 */
import type { Positional } from '../../chunked-list.js';
import type { IndexedMessage } from '../../messages/message-index.js';
import type { ToolPairer } from '../../messages/tool-pairing.js';
import { runSteps, type Steps } from '../../time-slice.js';
import { rewriteRef } from '../view/realize-rewrite.js';
import { applyRewrite, type CascadeRun, type LevelReport } from './cascade-types.js';
import { clearableNames, clearEntry } from './clear-tool-results.js';

/** Below this many tokens kept, a shortened result is not worth keeping: it is cleared. */
const MIN_KEPT_TOKENS = 200;
/** The marker a shortened text carries, in tokens (kept in hand when sizing the cut). */
const MARKER_TOKENS = 48;

/** Shortens or clears protected tool results of `run`, oldest first, until it is under its target. */
export function giveWay(
  run: CascadeRun,
  pairing: { pairer: ToolPairer; items: Positional<IndexedMessage> },
): LevelReport[] {
  return runSteps(giveWaySteps(run, pairing));
}

/** {@link giveWay} as {@link Steps}: a pause after each result looked at. */
export function* giveWaySteps(
  run: CascadeRun,
  pairing: { pairer: ToolPairer; items: Positional<IndexedMessage> },
): Steps<LevelReport[]> {
  const cleared: LevelReport = { level: 'clear_tool_results', count: 0, tokensSaved: 0, refs: [] };
  const cut: LevelReport = { level: 'cut_oversized', count: 0, tokensSaved: 0, refs: [] };
  const lastRound = run.entries.at(-1)?.round ?? -1;
  const excluded = new Set(run.policy.clearExcludeTools);
  for (let k = 0; k < run.entries.length && run.total > run.target; k++) {
    const entry = run.entries[k]!;
    if (entry.pinned || entry.rewrite || entry.item.entry.parsed.toolResults.length === 0) continue;
    yield;
    // The newest message is sent as given, whatever its round (issue 43).
    if (k === run.entries.length - 1 || (entry.round >= 0 && entry.round === lastRound)) continue;
    if (entry.tokens < run.policy.clearMinTokens) continue;
    const names = clearableNames(entry.item, pairing, excluded);
    if (!names) continue;
    const keepTokens = entry.tokens - (run.total - run.target) - MARKER_TOKENS;
    if (keepTokens >= MIN_KEPT_TOKENS) {
      const chars = JSON.stringify(entry.item.entry.wire)?.length ?? 0;
      const keepChars = Math.floor((keepTokens * chars * 0.9) / Math.max(1, entry.originalTokens));
      const ref = rewriteRef('cut', entry.item.id);
      const saved = applyRewrite(run, k, { kind: 'cut', ref, keepChars });
      if (saved > 0) {
        cut.count++;
        cut.tokensSaved += saved;
        cut.refs.push(ref);
        continue;
      }
    }
    clearEntry(run, k, names, cleared);
  }
  for (const report of [cleared, cut]) if (report.count > 0) report.gaveWay = report.count;
  return [cleared, cut];
}
