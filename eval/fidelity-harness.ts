/**
 * The fidelity harness: compacts sessions with known key facts through the real
 * CompactManager at several compression ratios and measures which facts the model would
 * still see (the summary plus the messages kept verbatim).
 */

import { isCompactError } from '../src/core/errors.js';
import { CompactManager } from '../src/core/manager/compact-manager.js';
import { STRATEGY_NAMES, type StrategyName } from '../src/core/summary/summarizer.js';
import { contextText, factPresent, normalize, slidingWindow, tally } from './context-measures.js';
import { directRun } from './direct-compaction.js';
import type { CompactionMode, FidelityRun, RunConfig, SummarizerUnderTest } from './fidelity-run.js';
import type { FidelitySession } from './planted-session.js';
import { textTable } from './text-table.js';

export { contextText, factPresent, slidingWindow } from './context-measures.js';
export type { CompactionMode, FidelityRun, RunConfig, SummarizerUnderTest } from './fidelity-run.js';

/** Options of {@link runFidelity}. */
export interface FidelityOptions {
  /** Session sets to compact, by name (e.g. `planted`, `swe-agent`). */
  sets: Record<string, FidelitySession[]>;
  summarizers: SummarizerUnderTest[];
  /** @default all four */
  strategies?: readonly StrategyName[];
  /** Target compression ratios (raw history tokens / compacted context tokens). @default [5, 10, 20] */
  ratios?: readonly number[];
  /** @default ['one-shot', 'rolling'] */
  modes?: readonly CompactionMode[];
  /**
   * Share of the context budget (system prompts aside) given to the summary
   * (`maxSummaryTokens`); the rest holds the messages kept verbatim. Smaller shares are tried when the kept tail alone does not fit.
   * @default 0.5
   */
  summaryShare?: number;
  /** The agent model (its tokenizer counts everything). @default 'gpt-4o' */
  model?: string;
  /** Time limit of one summarizer call. @default 60_000 */
  summarizerTimeoutMs?: number;
  /** Called after each run (progress). */
  onRun?: (run: FidelityRun) => void;
}

/** Runs aggregated per set, strategy, summarizer, mode and ratio. */
export interface FidelityRow {
  set: string;
  strategy: StrategyName;
  summarizer: string;
  mode: CompactionMode;
  targetRatio: number;
  sessions: number;
  /** Total compactable raw tokens / total compacted tokens (system prompts excluded) over the sessions that ran. */
  ratio: number;
  facts: number;
  retained: number;
  /** `retained / facts`. */
  retainedShare: number;
  summarizedFacts: number;
  retainedSummarized: number;
  /** `retainedSummarized / summarizedFacts` (1 when none were summarized). */
  summarizedShare: number;
  /** Facts a same-size sliding window keeps. */
  windowRetained: number;
  /** `windowRetained / facts`. */
  windowShare: number;
  meanSummaryTokens: number;
  failures: number;
  errors: number;
  /** Runs whose final summary was written by the embedded fallback instead of this summarizer. */
  fallbacks: number;
}

/** Checks that each fact is in the raw history it was planted in; throws otherwise. */
export function assertFactsPresent(session: FidelitySession): void {
  const raw = normalize(contextText(session.messages));
  for (const fact of session.facts) {
    if (!factPresent(fact, raw))
      throw new Error(`${session.name}: fact ${fact.id} (${fact.probes.join(' | ')}) is not in the history`);
  }
}

function withIds(messages: readonly Record<string, unknown>[]): Record<string, unknown>[] {
  // A stable meta id per raw message tells which messages the summary covers.
  return messages.map((message, index) => ({ ...message, meta: { id: `raw-${index}` } }));
}

async function runOnce(config: RunConfig): Promise<FidelityRun> {
  const { session, strategy, mode, ratio, share } = config;
  const messages = withIds(session.messages);
  const probe = new CompactManager({ model: config.model, maxContextTokens: 10_000_000 });
  const rawTokens = probe.estimate(messages).total;
  // System prompts are never compacted: the ratio applies to the rest of the request.
  const pinnedTokens = probe.estimate(
    messages.filter((m) => m.role === 'system' || m.role === 'developer'),
  ).total;
  const contextBudget = pinnedTokens + Math.max(64, Math.floor((rawTokens - pinnedTokens) / ratio));
  if (mode === 'direct' || mode === 'direct-rolling')
    return directRun(config, { rawTokens, pinnedTokens, contextBudget, probe });
  const maxSummaryTokens = Math.max(16, Math.floor((contextBudget - pinnedTokens) * share));
  const manager = new CompactManager({
    model: config.model,
    maxContextTokens: contextBudget,
    summarizer: config.under.summarizer,
    summarizerTimeoutMs: config.timeoutMs,
    redaction: false,
    policy: {
      strategy,
      maxSummaryTokens,
      hardCapBuffer: 0,
      // One-shot compacts once down to the budget; rolling compacts whenever 85% is reached.
      triggerPct: mode === 'one-shot' ? 1 : 0.85,
    },
  });
  let errors = 0;
  let compactions = 0;
  manager.on('compact.error', (event) => {
    if (event.properties.errorType !== 'redaction_disabled') {
      errors++;
      if (process.env.FIDELITY_DEBUG)
        console.error(
          event.properties.errorType,
          event.properties.message,
          JSON.stringify(event.properties.context ?? {}),
        );
    }
  });
  manager.on('compact.summary_created', () => {
    compactions++;
  });
  const sessionId = `${config.set}/${session.name}`;
  let output: unknown[];
  let contextTokens: number;
  if (mode === 'one-shot') {
    const result = await manager.manualCompact(sessionId, messages);
    output = result.messages;
    contextTokens = result.tokensAfter;
  } else {
    // Before every model call: each prefix that ends right before an assistant message.
    for (let end = 1; end < messages.length; end++) {
      if ((messages[end] as { role?: string }).role === 'assistant')
        await manager.preflight(sessionId, messages.slice(0, end));
    }
    const result = await manager.compact(sessionId, messages);
    output = result.messages;
    contextTokens = result.tokensAfter;
  }
  const state = await manager.state(sessionId);
  const covered = new Set(state?.coveredIds ?? []);
  await manager.shutdown();
  const window = slidingWindow(session.messages, contextTokens, (m) => probe.estimate(m).total);
  const kept = tally(session, output, window, (index) => covered.has(`raw-${index}`));
  const summary = state?.summary;
  return {
    set: config.set,
    session: session.name,
    strategy,
    summarizer: config.under.label,
    mode,
    targetRatio: ratio,
    rawTokens,
    contextTokens,
    pinnedTokens,
    ratio: (rawTokens - pinnedTokens) / (contextTokens - pinnedTokens),
    summaryTokens: summary?.tokens ?? 0,
    maxSummaryTokens,
    compactions,
    facts: session.facts.length,
    ...kept,
    ...(summary ? { writtenBy: summary.summarizer } : {}),
    errors,
  };
}

/** Compacts every session with every configuration; returns one run per combination. */
export async function runFidelity(options: FidelityOptions): Promise<FidelityRun[]> {
  const strategies = options.strategies ?? STRATEGY_NAMES;
  const ratios = options.ratios ?? [5, 10, 20];
  const modes = options.modes ?? ['one-shot', 'rolling'];
  const baseShare = options.summaryShare ?? 0.5;
  const shares = [baseShare, baseShare * 0.6, baseShare * 0.3];
  const runs: FidelityRun[] = [];
  for (const [set, sessions] of Object.entries(options.sets)) {
    for (const session of sessions) {
      assertFactsPresent(session);
      for (const under of options.summarizers) {
        for (const mode of modes) {
          if (under.modes && !under.modes.includes(mode)) continue;
          for (const strategy of strategies) {
            for (const ratio of ratios) {
              let run: FidelityRun | undefined;
              let lastError: unknown;
              for (const share of shares) {
                try {
                  run = await runOnce({
                    set,
                    session,
                    strategy,
                    under,
                    mode,
                    ratio,
                    share,
                    model: options.model ?? 'gpt-4o',
                    timeoutMs: options.summarizerTimeoutMs ?? 60_000,
                  });
                  break;
                } catch (error) {
                  if (!isCompactError(error, 'insufficient_budget')) throw error;
                  lastError = error;
                }
              }
              run ??= {
                set,
                session: session.name,
                strategy,
                summarizer: under.label,
                mode,
                targetRatio: ratio,
                rawTokens: 0,
                contextTokens: 0,
                pinnedTokens: 0,
                ratio: 0,
                summaryTokens: 0,
                maxSummaryTokens: 0,
                compactions: 0,
                facts: session.facts.length,
                retained: 0,
                summarizedFacts: 0,
                retainedSummarized: 0,
                windowRetained: 0,
                missing: [],
                errors: 0,
                failure: lastError instanceof Error ? lastError.message : String(lastError),
              };
              runs.push(run);
              options.onRun?.(run);
            }
          }
        }
      }
    }
  }
  return runs;
}

/** Aggregates runs per set, strategy, summarizer, mode and target ratio (failed runs excluded from the shares). */
export function aggregateRuns(runs: readonly FidelityRun[]): FidelityRow[] {
  const rows = new Map<string, { row: FidelityRow; raw: number; context: number; summary: number }>();
  for (const run of runs) {
    const key = [run.set, run.summarizer, run.mode, run.strategy, run.targetRatio].join('\u0000');
    let entry = rows.get(key);
    if (!entry) {
      entry = {
        row: {
          set: run.set,
          strategy: run.strategy,
          summarizer: run.summarizer,
          mode: run.mode,
          targetRatio: run.targetRatio,
          sessions: 0,
          ratio: 0,
          facts: 0,
          retained: 0,
          retainedShare: 0,
          summarizedFacts: 0,
          retainedSummarized: 0,
          summarizedShare: 1,
          windowRetained: 0,
          windowShare: 0,
          meanSummaryTokens: 0,
          failures: 0,
          errors: 0,
          fallbacks: 0,
        },
        raw: 0,
        context: 0,
        summary: 0,
      };
      rows.set(key, entry);
    }
    const { row } = entry;
    if (run.failure) {
      row.failures++;
      continue;
    }
    row.sessions++;
    row.facts += run.facts;
    row.retained += run.retained;
    row.summarizedFacts += run.summarizedFacts;
    row.retainedSummarized += run.retainedSummarized;
    row.windowRetained += run.windowRetained;
    row.errors += run.errors;
    if (run.summarizer !== 'embedded' && run.writtenBy === 'embedded') row.fallbacks++;
    entry.raw += run.rawTokens - run.pinnedTokens;
    entry.context += run.contextTokens - run.pinnedTokens;
    entry.summary += run.summaryTokens;
  }
  return [...rows.values()].map(({ row, raw, context, summary }) => ({
    ...row,
    ratio: context > 0 ? raw / context : 0,
    retainedShare: row.facts > 0 ? row.retained / row.facts : 0,
    summarizedShare: row.summarizedFacts > 0 ? row.retainedSummarized / row.summarizedFacts : 1,
    windowShare: row.facts > 0 ? row.windowRetained / row.facts : 0,
    meanSummaryTokens: row.sessions > 0 ? summary / row.sessions : 0,
  }));
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

/** Renders aggregated rows as a fixed-width text table. */
export function formatTable(rows: readonly FidelityRow[]): string {
  const header = [
    'set',
    'summarizer',
    'mode',
    'strategy',
    'target',
    'ratio',
    'retained',
    'of summarized',
    'window',
    'x window',
    'summary tok',
    'runs',
    'notes',
  ];
  const lines = rows.map((row) => [
    row.set,
    row.summarizer,
    row.mode,
    row.strategy,
    `${row.targetRatio}:1`,
    row.sessions > 0 ? `${row.ratio.toFixed(1)}:1` : '-',
    row.sessions > 0 ? `${pct(row.retainedShare)} (${row.retained}/${row.facts})` : 'n/a',
    row.sessions > 0
      ? `${pct(row.summarizedShare)} (${row.retainedSummarized}/${row.summarizedFacts})`
      : 'n/a',
    row.sessions > 0 ? `${pct(row.windowShare)} (${row.windowRetained}/${row.facts})` : 'n/a',
    row.sessions > 0 && row.windowRetained > 0 ? `${(row.retained / row.windowRetained).toFixed(1)}x` : '-',
    row.sessions > 0 ? String(Math.round(row.meanSummaryTokens)) : '-',
    String(row.sessions),
    [
      row.failures ? `${row.failures} over budget (kept tail alone exceeds it)` : '',
      row.errors ? `${row.errors} summarizer errors` : '',
      row.fallbacks ? `${row.fallbacks} written by the embedded fallback` : '',
    ]
      .filter(Boolean)
      .join('; '),
  ]);
  return textTable(header, lines);
}
