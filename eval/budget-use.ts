/**
 * Budget use after compaction (issue 35): when the history holds more than fits, the request
 * a compaction returns should use at least 90% of its target (verbatim recent turns first,
 * then summary lines). Drives chat (the personal conversations, a window of 1/8 of each),
 * support and coding sessions (eval/instruction-sessions.ts, 8k and 32k windows) through a
 * CompactManager with the default policy and the built-in summarizer, `compact()` before every
 * model call, and records `tokensAfter / targetTokens` of every compaction that summarized
 * (folded history). Compactions that only cleared old tool results are counted apart: their
 * view holds the whole history (old outputs as placeholders), so there is nothing to fill with.
 */
import { CompactManager } from '../src/core/manager/compact-manager.js';
import { instructionSession } from './instruction-sessions.js';
import type { FidelitySession } from './planted-session.js';

/** Issue 35: the request uses at least this share of its target after a summarizing compaction. */
export const BUDGET_USE_TARGET = 0.9;

/** Budget use of one session kind. */
export interface BudgetUseRow {
  kind: string;
  window: string;
  sessions: number;
  /** Compactions that summarized. */
  compactions: number;
  /** Smallest and mean `tokensAfter / targetTokens` of those. */
  min: number;
  mean: number;
  /** Share of those at or above {@link BUDGET_USE_TARGET}. */
  atTarget: number;
  /** Compactions that only cleared tool results, and their mean use. */
  clearOnly: number;
  clearOnlyMean: number;
}

interface Drive {
  summarized: number[];
  clearOnly: number[];
}

async function drive(
  name: string,
  window: number,
  steps: readonly Record<string, unknown>[][],
): Promise<Drive> {
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: window, redaction: false });
  let target = 0;
  manager.on('compact.trigger_decision', (event) => {
    target = event.properties.targetTokens ?? 0;
  });
  const out: Drive = { summarized: [], clearOnly: [] };
  const history: Record<string, unknown>[] = [];
  for (const step of steps) {
    history.push(...step);
    const result = await manager.compact(name, history);
    if (!result.applied || target <= 0) continue;
    const use = result.tokensAfter / target;
    if (result.levels.some((level) => level.level === 'summarize')) out.summarized.push(use);
    else out.clearOnly.push(use);
  }
  await manager.shutdown();
  return out;
}

function row(kind: string, window: string, drives: readonly Drive[]): BudgetUseRow {
  const uses = drives.flatMap((d) => d.summarized);
  const clear = drives.flatMap((d) => d.clearOnly);
  const mean = (xs: readonly number[]) => (xs.length > 0 ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
  return {
    kind,
    window,
    sessions: drives.length,
    compactions: uses.length,
    min: uses.length > 0 ? Math.min(...uses) : 0,
    mean: mean(uses),
    atTarget: uses.length > 0 ? uses.filter((u) => u >= BUDGET_USE_TARGET).length / uses.length : 0,
    clearOnly: clear.length,
    clearOnlyMean: mean(clear),
  };
}

/** Options of {@link runBudgetUse}. */
export interface BudgetUseOptions {
  /** Chat sessions by generator name (each compacted in a window of 1/8 of its size). */
  chats: Record<string, FidelitySession[]>;
  /** Sessions per agent kind and window. @default 1 */
  seeds?: number;
  /** @default [8000, 32000] */
  windows?: readonly number[];
  /** Model calls per agent session. @default 300 */
  calls?: number;
}

/** Runs every kind; one row per kind and window. */
export async function runBudgetUse(options: BudgetUseOptions): Promise<BudgetUseRow[]> {
  const rows: BudgetUseRow[] = [];
  const probe = new CompactManager({ model: 'gpt-4o', maxContextTokens: 10_000_000 });
  for (const [name, sessions] of Object.entries(options.chats)) {
    const drives: Drive[] = [];
    for (const session of sessions) {
      const window = Math.floor(probe.estimate(session.messages).total / 8);
      drives.push(
        await drive(
          session.name,
          window,
          session.messages.map((m) => [m]),
        ),
      );
    }
    rows.push(row(`chat (${name})`, '1/8', drives));
  }
  for (const kind of ['support', 'coding'] as const) {
    for (const window of options.windows ?? [8_000, 32_000]) {
      const drives: Drive[] = [];
      for (let seed = 1; seed <= (options.seeds ?? 1); seed++) {
        const session = instructionSession({ kind, seed, calls: options.calls ?? 300 });
        drives.push(
          await drive(
            session.name,
            window,
            session.calls.flatMap((c) => [[...c.before], [...c.after]]),
          ),
        );
      }
      rows.push(row(kind, `${window / 1000}k`, drives));
    }
  }
  await probe.shutdown();
  return rows;
}

/** The table and the verdict. */
export function formatBudgetUse(rows: readonly BudgetUseRow[]): string[] {
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  const lines = [
    'kind                    window  sessions  summarized  min use  mean use  >= 90%   clear-only (mean use)',
    '----------------------  ------  --------  ----------  -------  --------  -------  ---------------------',
  ];
  for (const r of rows)
    lines.push(
      `${r.kind.padEnd(22)}  ${r.window.padEnd(6)}  ${String(r.sessions).padStart(8)}  ${String(r.compactions).padStart(10)}  ${pct(r.min).padStart(7)}  ${pct(r.mean).padStart(8)}  ${pct(r.atTarget).padStart(7)}  ${r.clearOnly} (${pct(r.clearOnlyMean)})`,
    );
  const measured = rows.filter((r) => r.compactions > 0);
  const worst = Math.min(...measured.map((r) => r.min));
  lines.push(
    `target: after a compaction that folds history, the request uses >= ${BUDGET_USE_TARGET * 100}% of its target: smallest ${pct(worst)} over ${measured.reduce((n, r) => n + r.compactions, 0)} compactions: ${worst >= BUDGET_USE_TARGET ? 'MET' : 'MISSED'}`,
  );
  return lines;
}
