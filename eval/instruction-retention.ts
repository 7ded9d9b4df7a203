/**
 * Instruction retention (issue 20 point 4): generated coding, support and research sessions
 * driven through a real CompactManager (default policy, built-in summarizer, `compact()`
 * before every model call, the model's tool call and its result appended after it, like an
 * agent loop), in 8k, 32k and 128k windows. Measured: the share of (instruction, later call)
 * pairs whose request, the messages `compact()` returned, still holds the instruction's key
 * content.
 */
import { CompactManager } from '../src/core/manager/compact-manager.js';
import { contextText, normalize } from './context-measures.js';
import {
  type InstructionSession,
  instructionSession,
  SESSION_KINDS,
  type SessionKind,
} from './instruction-sessions.js';
import { textTable } from './text-table.js';

/** Issue 20: share of (instruction, later call) pairs whose request holds the instruction. */
export const INSTRUCTION_RETENTION_TARGET = 0.99;
/** The windows measured by default. */
export const DEFAULT_WINDOWS = [8_000, 32_000, 128_000] as const;

/** One session run through the manager. */
export interface InstructionRun {
  kind: SessionKind;
  session: string;
  window: number;
  calls: number;
  instructions: number;
  /** (instruction, later call) pairs. */
  pairs: number;
  /** Pairs whose request held every key of the instruction. */
  held: number;
  /** Summaries written (compactions that summarized). */
  summaries: number;
  /** Calls that compacted. */
  compactions: number;
  /** Largest request sent, in tokens. */
  maxRequestTokens: number;
  /** Per lost instruction: its sentence, the calls it was missing from, the first one. */
  lost: { id: string; sentence: string; missing: number; firstMissing: number }[];
  ms: number;
}

/** Options of {@link runInstructionRetention}. */
export interface InstructionRetentionOptions {
  /** @default all three */
  kinds?: readonly SessionKind[];
  /** @default 8k, 32k, 128k */
  windows?: readonly number[];
  /** Sessions per kind and window (seeds 1..n). @default 1 */
  seeds?: number;
  /** Model calls per session. @default 300 */
  calls?: number;
  /** The agent model (its tokenizer counts everything). @default 'gpt-4o' */
  model?: string;
  /** Called after each run (progress). */
  onRun?: (run: InstructionRun) => void;
}

/** Drives one session through a manager with the default policy and the built-in summarizer. */
export async function runInstructionSession(
  session: InstructionSession,
  window: number,
  model = 'gpt-4o',
): Promise<InstructionRun> {
  const started = performance.now();
  const manager = new CompactManager({ model, maxContextTokens: window, redaction: false });
  let summaries = 0;
  manager.on('compact.summary_created', () => {
    summaries++;
  });
  const history: Record<string, unknown>[] = [];
  const keys = session.instructions.map((i) => i.keys.map(normalize));
  const missing = session.instructions.map(() => ({ count: 0, first: -1 }));
  let pairs = 0;
  let held = 0;
  let compactions = 0;
  let maxRequestTokens = 0;
  for (let call = 0; call < session.calls.length; call++) {
    const step = session.calls[call]!;
    history.push(...step.before);
    const result = await manager.compact(session.name, history);
    if (result.applied) compactions++;
    maxRequestTokens = Math.max(maxRequestTokens, result.tokensAfter);
    const text = normalize(contextText(result.messages));
    session.instructions.forEach((instruction, k) => {
      if (instruction.call >= call) return;
      pairs++;
      if (keys[k]!.every((key) => text.includes(key))) held++;
      else {
        const m = missing[k]!;
        if (m.count++ === 0) m.first = call;
      }
    });
    history.push(...step.after);
  }
  await manager.shutdown();
  return {
    kind: session.kind,
    session: session.name,
    window,
    calls: session.calls.length,
    instructions: session.instructions.length,
    pairs,
    held,
    summaries,
    compactions,
    maxRequestTokens,
    lost: session.instructions.flatMap((instruction, k) =>
      missing[k]!.count > 0
        ? [
            {
              id: instruction.id,
              sentence: instruction.sentence,
              missing: missing[k]!.count,
              firstMissing: missing[k]!.first,
            },
          ]
        : [],
    ),
    ms: performance.now() - started,
  };
}

/** Runs every kind in every window; one run per session. */
export async function runInstructionRetention(
  options: InstructionRetentionOptions = {},
): Promise<InstructionRun[]> {
  const runs: InstructionRun[] = [];
  for (const kind of options.kinds ?? SESSION_KINDS) {
    for (const window of options.windows ?? DEFAULT_WINDOWS) {
      for (let seed = 1; seed <= (options.seeds ?? 1); seed++) {
        const session = instructionSession({ kind, seed, calls: options.calls ?? 300 });
        const run = await runInstructionSession(session, window, options.model);
        runs.push(run);
        options.onRun?.(run);
      }
    }
  }
  return runs;
}

/** Runs aggregated per kind and window, with an `all` row. */
export interface InstructionRow {
  kind: string;
  window: string;
  sessions: number;
  instructions: number;
  pairs: number;
  held: number;
  share: number;
  summaries: number;
  maxRequestTokens: number;
  lost: number;
}

/** Aggregates per (kind, window), then one row over everything. */
export function aggregateInstructionRuns(runs: readonly InstructionRun[]): InstructionRow[] {
  const rows = new Map<string, InstructionRow>();
  const add = (kind: string, window: string, run: InstructionRun) => {
    const key = `${kind}\u0000${window}`;
    let row = rows.get(key);
    if (!row) {
      row = {
        kind,
        window,
        sessions: 0,
        instructions: 0,
        pairs: 0,
        held: 0,
        share: 0,
        summaries: 0,
        maxRequestTokens: 0,
        lost: 0,
      };
      rows.set(key, row);
    }
    row.sessions++;
    row.instructions += run.instructions;
    row.pairs += run.pairs;
    row.held += run.held;
    row.summaries += run.summaries;
    row.maxRequestTokens = Math.max(row.maxRequestTokens, run.maxRequestTokens);
    row.lost += run.lost.length;
  };
  for (const run of runs) add(run.kind, `${run.window / 1000}k`, run);
  for (const run of runs) add('all', 'all', run);
  return [...rows.values()].map((row) => ({ ...row, share: row.pairs > 0 ? row.held / row.pairs : 1 }));
}

/** Renders the rows as a fixed-width table. */
export function formatInstructionTable(rows: readonly InstructionRow[]): string {
  const header = [
    'kind',
    'window',
    'sessions',
    'instructions',
    'retained (pairs)',
    'lost',
    'summaries',
    'max request',
  ];
  const lines = rows.map((row) => [
    row.kind,
    row.window,
    String(row.sessions),
    String(row.instructions),
    `${(row.share * 100).toFixed(1)}% (${row.held}/${row.pairs})`,
    String(row.lost),
    String(row.summaries),
    String(row.maxRequestTokens),
  ]);
  return textTable(header, lines);
}

/** The `target:` line. */
export function instructionVerdict(rows: readonly InstructionRow[]): string {
  const all = rows.find((r) => r.kind === 'all');
  if (!all) return 'target: instruction retention not measured';
  return `target: instruction retention keeps ${(all.share * 100).toFixed(1)}% of (instruction, later call) pairs (goal >= ${INSTRUCTION_RETENTION_TARGET * 100}%): ${all.share >= INSTRUCTION_RETENTION_TARGET ? 'MET' : 'MISSED'}`;
}
