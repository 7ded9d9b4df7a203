/**
 * Cascade level b: shorten large tool-call arguments in old messages (file contents the
 * agent wrote): every string longer than `shortenArgumentsAbove` keeps its head and tail
 * around a marker naming the archive reference. Oldest first, outside the last
 * `keepToolIoPairs` rounds, until the request is under the target.
 */
import { runSteps, type Steps } from '../../time-slice.js';
import { rewriteRef } from '../view/realize-rewrite.js';
import { applyRewrite, type CascadeRun, type LevelReport } from './cascade-types.js';

/** Entries looked at between two steps of the first pass of {@link shortenArgumentSteps}. */
const STEP_ENTRIES = 1_024;

/** Shortens old, large call arguments of `run` until it is under its target. */
export function shortenArguments(run: CascadeRun): LevelReport {
  return runSteps(shortenArgumentSteps(run));
}

/** {@link shortenArguments} as {@link Steps}: a pause after each call looked at. */
export function* shortenArgumentSteps(run: CascadeRun): Steps<LevelReport> {
  const report: LevelReport = { level: 'shorten_arguments', count: 0, tokensSaved: 0, refs: [] };
  const { policy } = run;
  const callEntries: number[] = [];
  // The pass over every entry yields too (200k tiny messages' passes of three levels in one step held the loop 20 ms).
  for (let k = 0; k < run.entries.length; k++) {
    if (k % STEP_ENTRIES === STEP_ENTRIES - 1) yield;
    const entry = run.entries[k]!;
    if (!entry.pinned && entry.item.entry.parsed.toolCalls.length > 0) callEntries.push(k);
  }
  const candidates = callEntries.slice(0, Math.max(0, callEntries.length - policy.keepToolIoPairs));
  for (const k of candidates) {
    if (run.total <= run.target) break;
    yield;
    const entry = run.entries[k]!;
    if (entry.rewrite) continue;
    const calls = entry.item.entry.parsed.toolCalls;
    if (!calls.some((call) => call.arguments.length > policy.shortenArgumentsAbove)) continue;
    const ref = rewriteRef('shortened', entry.item.id);
    const saved = applyRewrite(
      run,
      k,
      // With its message's hash: the state's record is this object, not a copy (next-state.ts).
      { kind: 'shortened', ref, keepChars: policy.shortenArgumentsKeep, hash: entry.item.entry.hash },
      calls.map((call) => call.name).join(', '),
    );
    if (saved > 0) {
      report.count++;
      report.tokensSaved += saved;
      report.refs.push(ref);
    }
  }
  return report;
}
