/**
 * The swap at a trigger: a summary prepared in the background (see
 * background-preparation.ts) replaces the messages it folds; the rest stays verbatim, or goes
 * through the cheap cascade levels when the request is still over the target.
 */

import { runStepsYielding, TimeSlice } from '../../time-slice.js';
import { type CascadeInput, type CascadeResult, summaryMessageTokens } from '../run-cascade.js';
import type { ViewEntry } from '../view/session-view.js';
import { cascadeRun, type LevelReport } from './cascade-types.js';
import { clearToolResultSteps, clearToolResults } from './clear-tool-results.js';
import type { PreparedSummary } from './prepared-summary.js';
import { shortenArgumentSteps, shortenArguments } from './shorten-arguments.js';

/**
 * True when the cheap levels alone (clear old tool results, shorten arguments) bring the
 * request to the target: a trigger then needs no summary, and does not wait for one still
 * being prepared in the background. A dry run on copies of the entries; the rewrites it
 * realizes are cached, so the cascade that follows counts none of them again.
 */
export async function cheapLevelsReachTarget(
  input: Pick<CascadeInput, 'view' | 'pairing' | 'policy' | 'decision' | 'tokensBefore' | 'realize'>,
): Promise<boolean> {
  const run = cascadeRun(input, [...input.view.entries], input.tokensBefore);
  // In slices, as the cascade runs them (each rewrite realized and counted).
  const slice = new TimeSlice();
  if (run.total > run.target) await runStepsYielding(clearToolResultSteps(run, input.pairing), slice);
  if (run.total > run.target) await runStepsYielding(shortenArgumentSteps(run), slice);
  return run.total <= run.target;
}

/**
 * The cascade result of swapping `prepared` into a triggered request: its messages folded,
 * the rest kept, the cheap levels (clear old tool results, shorten arguments) run when still
 * over the target. `undefined` when the request would stay at or above the trigger (the full
 * cascade then runs).
 */
export function swapPrepared(input: CascadeInput, prepared: PreparedSummary): CascadeResult | undefined {
  const { view, codec, counter, decision } = input;
  const foldedIds = new Set(prepared.foldedIds);
  const kept: ViewEntry[] = [];
  const folded: ViewEntry[] = [];
  for (const entry of view.entries)
    (!entry.pinned && foldedIds.has(entry.item.id) ? folded : kept).push(entry);
  const version = view.nextVersion;
  const archiveLine = input.archiveLine?.(version);
  const body = archiveLine ? `${prepared.outcome.text}\n${archiveLine}` : prepared.outcome.text;
  const tokens = summaryMessageTokens(codec, counter, input.formatSummary(version, body));
  const foldedTokens = folded.reduce((sum, entry) => sum + entry.tokens, 0);
  const run = cascadeRun(input, kept, input.tokensBefore - foldedTokens - input.summaryTokens + tokens);
  const levels: LevelReport[] = [
    {
      level: 'summarize',
      count: folded.length,
      tokensSaved: foldedTokens + input.summaryTokens - tokens,
      refs: archiveLine ? [`sum-v${version}`] : [],
    },
  ];
  if (run.total > run.target) levels.push(clearToolResults(run, input.pairing));
  if (run.total > run.target) levels.push(shortenArguments(run));
  if (run.total >= decision.triggerTokens || run.total > run.budget) return undefined;
  const { outcome } = prepared;
  return {
    entries: run.entries,
    summary: {
      body,
      version,
      summarizer: outcome.summarizer,
      ...(outcome.fallback ? { fallback: outcome.fallback } : {}),
      tokens,
    },
    folded: folded.map((entry) => entry.item),
    rewrites: run.rewrites,
    levels: levels.filter(
      (level) => level.count > 0 || level.level === 'summarize' || level.summaryLinesGivenUp !== undefined,
    ),
    tokensAfter: run.total,
  };
}
