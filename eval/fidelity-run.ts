/**
 * The shapes the fidelity runners share: the compaction modes, a summarizer under test, one
 * run's configuration and its measured result.
 */
import type { StrategyName, Summarizer } from '../src/core/summary/summarizer.js';
import type { FidelitySession } from './planted-session.js';

/** How the history reaches the manager. */
export type CompactionMode =
  /** One compaction of the whole history (`manualCompact`). */
  | 'one-shot'
  /** `preflight` before every model call as the history grows: repeated compactions that merge the previous summary. */
  | 'rolling'
  /** The summarizer alone, no manager: the older messages folded once, the latest kept verbatim. */
  | 'direct'
  /** The summarizer alone, folding as the history grows (the previous summary merged each time). */
  | 'direct-rolling';

/** A summarizer under test. */
export interface SummarizerUnderTest {
  /** Shown in the table, e.g. `embedded`, `openai:gpt-4o-mini`. */
  label: string;
  summarizer: Summarizer;
  /** Modes to run it in. @default ['one-shot', 'rolling'] */
  modes?: CompactionMode[];
}

/** One session compacted with one configuration. */
export interface FidelityRun {
  set: string;
  session: string;
  strategy: StrategyName;
  summarizer: string;
  mode: CompactionMode;
  targetRatio: number;
  /** Tokens of the raw history (the whole request, uncompacted). */
  rawTokens: number;
  /** Tokens of the compacted request. */
  contextTokens: number;
  /** Tokens of the system and developer messages (never compacted), counted in both. */
  pinnedTokens: number;
  /** `(rawTokens - pinnedTokens) / (contextTokens - pinnedTokens)`: the compression of the compactable history. */
  ratio: number;
  summaryTokens: number;
  maxSummaryTokens: number;
  /** Compactions performed. */
  compactions: number;
  facts: number;
  retained: number;
  /** Facts whose message was folded into the summary (the summarizer's share of the job). */
  summarizedFacts: number;
  retainedSummarized: number;
  /** Facts a sliding window of the same size keeps (the latest messages within `contextTokens`). */
  windowRetained: number;
  /** Probes of the facts that were lost. */
  missing: string[];
  /** Which summarizer wrote the final summary (differs from `summarizer` after a fallback). */
  writtenBy?: string;
  /** `compact.error` events seen (summarizer failures and fallbacks). */
  errors: number;
  /** Set when the configuration could not run (e.g. the kept tail alone exceeds the budget). */
  failure?: string;
}

/** One configuration of one session (for the runners). */
export interface RunConfig {
  set: string;
  session: FidelitySession;
  strategy: StrategyName;
  under: SummarizerUnderTest;
  mode: CompactionMode;
  ratio: number;
  share: number;
  model: string;
  timeoutMs: number;
}
