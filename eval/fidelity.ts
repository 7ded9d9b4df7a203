/**
 * `npm run eval:fidelity`: how many key facts survive compaction.
 *
 * Compacts planted sessions (seeded, 28 facts each) and the real SWE-agent transcripts
 * through the real CompactManager at 5:1, 10:1 and 20:1, once (one-shot) and as an agent
 * would (rolling: preflight before every model call), per strategy and summarizer, and
 * prints the share of facts still in the compacted context (summary + kept messages).
 *
 * Then compacts long multi-session personal conversations (dated sessions, facts stated in
 * passing among small talk) and agent runs whose remaining actions need ids from early turns
 * (both seeded) to 1/4, 1/8 and 1/16 of their size, and compares the facts and ids kept with
 * a sliding window of the same token size.
 *
 * Then drives generated coding, support and research sessions of 300 model calls with 5 to
 * 15 user instructions through a CompactManager (default policy, built-in summarizer) in 8k,
 * 32k and 128k windows, and prints the share of (instruction, later call) pairs whose request
 * still holds the instruction's key content (eval/instruction-retention.ts).
 *
 * Then scores instruction detection on real user sentences labelled by hand (issue 35,
 * test/fixtures/instructions): precision and recall per split (eval/instruction-labels.ts; since
 * issue 45 its oasst1 and SWE-agent rows are training data of the instruction model), and the
 * instruction model's leave-one-source-out table (eval/instruction-model-folds.ts).
 *
 * Then compacts real long chats between two people (LoCoMo, eval/data/locomo) rolling at 1/8
 * and prints the short factual answers still answerable from the request, a same-size
 * window's, and small talk's share of the summary (issue 45; eval/real-chat-facts.ts), on the
 * tuning set and on the held-out conversations.
 *
 * Flags: `--json` prints the runs and rows as JSON instead of the table; `--out FILE`
 * writes that JSON to FILE as well; `--seeds N` planted sessions (default 5);
 * `--ratios 5,10,20`; `--strategies task_state,brief`; `--no-swe-agent`; `--recall-seeds N` personal
 * conversations and agent runs each (default 5); `--recall-ratios 4,8,16`; `--no-recall`;
 * `--instruction-seeds N` sessions per kind and window (default 2); `--no-instructions`;
 * `--no-budget` skips the budget-use rows (eval/budget-use.ts); `--no-real-chats` skips the
 * LoCoMo rows.
 * Env: OPENAI_API_KEY / ANTHROPIC_API_KEY add the LLM summarizers (models from
 * FIDELITY_OPENAI_MODEL, default gpt-4o-mini, and FIDELITY_ANTHROPIC_MODEL, default
 * claude-haiku-4-5); they run one-shot only.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { instructionModelSpeed } from '../bench/instruction-model.js';
import { EmbeddedSummarizer } from '../src/core/summary/embedded-summarizer.js';
import { STRATEGY_NAMES, type StrategyName } from '../src/core/summary/summarizer.js';
import { resilientSummarizer } from '../src/summarizers/resilient-summarizer.js';
import { agentIdSession } from './agent-id-sessions.js';
import { formatBudgetUse, runBudgetUse } from './budget-use.js';
import {
  aggregateRuns,
  type CompactionMode,
  type FidelityRow,
  formatTable,
  runFidelity,
  type SummarizerUnderTest,
} from './fidelity-harness.js';
import { formatLabelScores, scoreLabelledSet } from './instruction-labels.js';
import {
  type Fold,
  formatFold,
  judgedFigures,
  leaveOneSourceOut,
  readLabelled,
} from './instruction-model-folds.js';
import {
  aggregateInstructionRuns,
  formatInstructionTable,
  type InstructionRun,
  instructionVerdict,
  runInstructionRetention,
} from './instruction-retention.js';
import { noisyPersonalSession } from './noisy-personal-sessions.js';
import { personalSession } from './personal-sessions.js';
import { plantedSession } from './planted-session.js';
import {
  formatRealChats,
  LOCOMO_SETS,
  type RealChatRun,
  runRealChats,
  totalRuns,
} from './real-chat-facts.js';
import { loadSweAgentSessions } from './swe-agent-sessions.js';

/** The spec's figure: share of key facts to retain at 10:1 with the embedded summarizer (task_state). */
export const FIDELITY_TARGET = 0.9;
/** Issue 16: at 1/8, the compacted context keeps this many times the facts a same-size window keeps. */
export const WINDOW_MULTIPLE_TARGET = 3;
/** Issue 16: at 1/8, share of the ids the remaining actions need that the compacted context keeps. */
export const ACTION_IDS_TARGET = 0.9;

async function llmSummarizers(log: (line: string) => void): Promise<SummarizerUnderTest[]> {
  const out: SummarizerUnderTest[] = [];
  if (process.env.OPENAI_API_KEY) {
    const { openaiSummarizer } = await import('../src/summarizers/openai/openai-summarizer.js');
    const model = process.env.FIDELITY_OPENAI_MODEL ?? 'gpt-4o-mini';
    out.push({
      label: `openai:${model}`,
      summarizer: resilientSummarizer(openaiSummarizer({ model }), { timeoutMs: 60_000 }),
      modes: ['one-shot'],
    });
  } else {
    log('LLM summarizer openai: SKIPPED (OPENAI_API_KEY is not set)');
  }
  if (process.env.ANTHROPIC_API_KEY) {
    const { anthropicSummarizer } = await import('../src/summarizers/anthropic/anthropic-summarizer.js');
    const model = process.env.FIDELITY_ANTHROPIC_MODEL ?? 'claude-haiku-4-5';
    out.push({
      label: `anthropic:${model}`,
      summarizer: resilientSummarizer(anthropicSummarizer({ model }), { timeoutMs: 60_000 }),
      modes: ['one-shot'],
    });
  } else {
    log('LLM summarizer anthropic: SKIPPED (ANTHROPIC_API_KEY is not set)');
  }
  return out;
}

function readOptions() {
  return parseArgs({
    options: {
      json: { type: 'boolean', default: false },
      out: { type: 'string' },
      seeds: { type: 'string', default: '5' },
      ratios: { type: 'string', default: '5,10,20' },
      strategies: { type: 'string', default: STRATEGY_NAMES.join(',') },
      'no-swe-agent': { type: 'boolean', default: false },
      'recall-seeds': { type: 'string', default: '5' },
      'recall-ratios': { type: 'string', default: '4,8,16' },
      'no-recall': { type: 'boolean', default: false },
      'instruction-seeds': { type: 'string', default: '2' },
      'no-instructions': { type: 'boolean', default: false },
      'no-budget': { type: 'boolean', default: false },
      'no-real-chats': { type: 'boolean', default: false },
    },
  }).values;
}

/**
 * The spec's check (planted facts at 10:1, one compaction, task_state) and issue 20's
 * (planted facts at 20:1 through rolling compaction: a preflight before every call).
 */
function plantedVerdict(rows: readonly FidelityRow[]): string {
  const row = (mode: string, ratio: number) =>
    rows.find(
      (r: FidelityRow) =>
        r.set === 'planted' &&
        r.summarizer === 'embedded' &&
        r.mode === mode &&
        r.strategy === 'task_state' &&
        r.targetRatio === ratio,
    );
  const line = (mode: string, ratio: number) => {
    const target = row(mode, ratio);
    return target
      ? `target: embedded task_state ${mode} at ${ratio}:1 on planted sessions retains ${(target.retainedShare * 100).toFixed(1)}% (goal >= ${FIDELITY_TARGET * 100}%): ${target.retainedShare >= FIDELITY_TARGET ? 'MET' : 'MISSED'}`
      : `target: not measured (planted task_state ${mode} ${ratio}:1 not in this run)`;
  };
  return `${line('one-shot', 10)}\n${line('rolling', 20)}`;
}

function printRecall(log: (line: string) => void, recall: { rows: FidelityRow[]; verdicts: string[] }): void {
  if (recall.rows.length === 0) return;
  log('');
  log(
    'Later questions and later actions: personal = facts asked about later; agent-ids = ids the remaining actions take.',
  );
  log(formatTable(recall.rows));
  log('');
  log(
    'window = the same facts in a sliding window of the same token size (the latest messages); x window = retained / window.',
  );
  for (const line of recall.verdicts) log(line);
}

async function main(): Promise<void> {
  const values = readOptions();
  // The table goes to stdout; with --json, stdout carries only the JSON and notes go to stderr.
  const log = (line: string) => (values.json ? process.stderr : process.stdout).write(`${line}\n`);
  const seeds = Number(values.seeds);
  const ratios = values.ratios.split(',').map(Number);
  const strategies = values.strategies.split(',') as StrategyName[];
  const planted = Array.from({ length: seeds }, (_, k) => plantedSession({ seed: k + 1 }));
  const sets: Record<string, ReturnType<typeof loadSweAgentSessions>> = { planted };
  if (!values['no-swe-agent']) {
    const swe = loadSweAgentSessions();
    if (swe.length > 0) sets['swe-agent'] = swe;
    else log('swe-agent transcripts: SKIPPED (test/fixtures/swe-agent not found)');
  }
  const summarizers: SummarizerUnderTest[] = [
    { label: 'embedded', summarizer: new EmbeddedSummarizer() },
    ...(await llmSummarizers(log)),
  ];
  const factCounts = Object.entries(sets)
    .map(
      ([set, sessions]) =>
        `${set}: ${sessions.length} sessions, ${sessions.reduce((n, s) => n + s.facts.length, 0)} facts`,
    )
    .join('; ');
  log(`fidelity: ${factCounts}; ratios ${ratios.map((r) => `${r}:1`).join(', ')}`);
  const runs = await runFidelity({ sets, summarizers, strategies, ratios });
  const rows = aggregateRuns(runs);
  const recall = values['no-recall']
    ? { rows: [] as FidelityRow[], runs: [] as typeof runs, verdicts: [] as string[] }
    : await recallRuns(
        Number(values['recall-seeds']),
        values['recall-ratios'].split(',').map(Number),
        summarizers,
      );
  const instructionRuns: InstructionRun[] = values['no-instructions']
    ? []
    : await runInstructionRetention({ seeds: Number(values['instruction-seeds']) });
  const instructionRows = aggregateInstructionRuns(instructionRuns);
  const instructions = {
    rows: instructionRows,
    runs: instructionRuns,
    verdicts: instructionRuns.length > 0 ? [instructionVerdict(instructionRows)] : [],
  };
  const verdict = plantedVerdict(rows);
  const labels = scoreLabelledSet();
  const folds = leaveOneSourceOut(readLabelled());
  const budget = values['no-budget']
    ? []
    : await runBudgetUse({
        chats: {
          personal: [1, 2, 3].map((seed) => personalSession({ seed })),
          'personal-noisy': [1, 2, 3].map((seed) => noisyPersonalSession({ seed })),
        },
      });
  const realChats: Record<string, RealChatRun[]> = {};
  if (!values['no-real-chats'])
    for (const [set, ids] of Object.entries(LOCOMO_SETS)) realChats[set] = await runRealChats(ids);
  const json = JSON.stringify(
    {
      generatedBy: 'eval/fidelity.ts',
      target: FIDELITY_TARGET,
      rows,
      runs,
      recall,
      instructions,
      labels: labels.map(({ wrong, ...score }) => score),
      instructionModelFolds: folds,
      budget,
      realChats: Object.fromEntries(
        Object.entries(realChats).map(([set, runs]) => [set, { runs, total: totalRuns(runs) }]),
      ),
    },
    null,
    2,
  );
  if (values.out) writeFileSync(values.out, `${json}\n`);
  if (values.json) {
    process.stdout.write(`${json}\n`);
    log(verdict);
    for (const line of recall.verdicts) log(line);
    for (const line of instructions.verdicts) log(line);
    for (const line of formatLabelScores(labels).slice(-2)) log(line);
    log(foldVerdict(folds));
    if (budget.length > 0) log(formatBudgetUse(budget).at(-1)!);
    for (const [set, runs] of Object.entries(realChats))
      for (const line of formatRealChats(runs, set).slice(-4)) log(line);
    return;
  }
  log('');
  log(formatTable(rows));
  log('');
  log(
    'retained = facts (all probes) present in the compacted context: summary + kept messages; of summarized = facts whose message was folded into the summary; ratio = raw history tokens / compacted context tokens, system prompts (never compacted) excluded from both, counted with o200k_base.',
  );
  log(verdict);
  printRecall(log, recall);
  printInstructions(log, instructions);
  printLabels(log, labels);
  printFolds(log, folds);
  if (budget.length > 0) {
    log('');
    log(
      'Budget use after compaction (issue 35): tokensAfter / targetTokens of every compaction that folded history (default policy, built-in summarizer, compact() before every call); chat in a window of 1/8 of the conversation.',
    );
    for (const line of formatBudgetUse(budget)) log(line);
  }
  printRealChats(log, realChats);
}

/** Issue 45: facts over small talk on real chats between people, tuning set and held out. */
function printRealChats(log: (line: string) => void, realChats: Record<string, RealChatRun[]>): void {
  for (const [set, runs] of Object.entries(realChats)) {
    log('');
    log(
      `Real chats between two people (LoCoMo, ${set}: ${runs.map((r) => r.name).join(', ')}), default policy, built-in summarizer, compact() after every message in a window of 1/8 of the chat. answers = QA answers of <= 5 words (not yes/no); ceiling = those in the turns the dataset says they were said in (every content word in one line, relative dates resolved); retained / window kept = of the ceiling, in the last request / in a sliding window of its size, in a line from one of those turns (the turn, or a summary line sharing 4 words in a row with it); small talk = tokens of summary sentences with no number, date, proper noun or rare word.`,
    );
    for (const line of formatRealChats(runs, set)) log(line);
  }
}

/** Issue 45: precision and recall on every held-out source, at least this. */
const FOLD_TARGET = 0.9;

/** Issue 45's verdict on the leave-one-source-out table. */
function foldVerdict(folds: readonly Fold[]): string {
  const scored = folds;
  // A source with no instruction (chats between people) meets it when nothing of it is flagged;
  // one of few instructions (gsm8k's narrative material) is judged by its false positives, as in
  // eval/instruction-model.test.ts (judgedFigures).
  const below = scored.filter((f) => {
    if (f.positives === 0) return (f.falsePositiveRate ?? 0) > 0;
    const judged = judgedFigures(f);
    return judged.precision < FOLD_TARGET || judged.recall < FOLD_TARGET;
  });
  return `target: instruction model, precision and recall >= ${FOLD_TARGET * 100}% on every held-out source: ${below.length === 0 ? 'MET' : `MISSED on ${below.map((f) => f.source).join(', ')} (met on ${scored.length - below.length} of ${scored.length})`}`;
}

/** Issue 45: the instruction model trained on all sources but one, tested on that one. */
function printFolds(log: (line: string) => void, folds: readonly Fold[]): void {
  log('');
  log(
    'Instruction model, leaving one source out (eval/data/instructions; npm run train:instructions): trained on every source but one, tested on the one left out. topical-chat is chats between people (no instruction in them: its figure is the share flagged).',
  );
  for (const fold of folds) log(formatFold(fold));
  log(foldVerdict(folds));
  const { perSecond } = instructionModelSpeed();
  log(
    `instruction model speed: ${Math.round(perSecond).toLocaleString('en')} sentences per CPU second (goal >= 20,000)`,
  );
}

/** Issue 35: instruction detection on the labelled real sentences. */
function printLabels(log: (line: string) => void, labels: ReturnType<typeof scoreLabelledSet>): void {
  log('');
  log(
    'Instruction detection on real user sentences (test/fixtures/instructions): is the sentence a request to the assistant (the summary quotes it under User instructions)? Since issue 45 its oasst1 and SWE-agent rows are training data of the model (figures on them are not held out), and its Topical-Chat rows are scored as said to a person.',
  );
  for (const line of formatLabelScores(labels)) log(line);
  for (const wrong of labels.find((s) => s.split === 'all')?.wrong.slice(0, 8) ?? [])
    log(`wrong: ${wrong.label === 'instruction' ? 'missed' : 'false alarm'}: "${wrong.text}"`);
}

/** The instruction-retention table and its verdict. */
function printInstructions(
  log: (line: string) => void,
  instructions: {
    rows: ReturnType<typeof aggregateInstructionRuns>;
    runs: InstructionRun[];
    verdicts: string[];
  },
): void {
  if (instructions.rows.length === 0) return;
  log('');
  log(
    "Instruction retention: generated sessions of 300 model calls, default policy, built-in summarizer, compact() before every call; retained = (instruction, later call) pairs whose request holds the instruction's key content (id, path or key words).",
  );
  log(formatInstructionTable(instructions.rows));
  const lost = instructions.runs.flatMap((run) => run.lost.map((l) => ({ run, ...l })));
  for (const l of lost.slice(0, 12))
    log(
      `lost: ${l.run.session} at ${l.run.window / 1000}k, "${l.sentence}" missing from ${l.missing} calls from call ${l.firstMissing}`,
    );
  if (lost.length > 12) log(`lost: ... and ${lost.length - 12} more`);
  log('');
  for (const line of instructions.verdicts) log(line);
}

/** The personal conversations and agent runs, compacted to 1/4, 1/8, 1/16, with their verdicts. */
async function recallRuns(seeds: number, ratios: number[], summarizers: SummarizerUnderTest[]) {
  const sets = {
    personal: Array.from({ length: seeds }, (_, k) => personalSession({ seed: k + 1 })),
    // Issue 35: real-chat noise; the old generator's row stays beside it for one wave.
    'personal-noisy': Array.from({ length: seeds }, (_, k) => noisyPersonalSession({ seed: k + 1 })),
    'agent-ids': Array.from({ length: seeds }, (_, k) => agentIdSession({ seed: k + 1 })),
  };
  const modes: CompactionMode[] = ['one-shot', 'rolling', 'direct', 'direct-rolling'];
  const runs = await runFidelity({ sets, summarizers, strategies: ['task_state'], ratios, modes });
  const rows = aggregateRuns(runs);
  const at8 = (set: string, mode: string) =>
    rows.find((r) => r.set === set && r.summarizer === 'embedded' && r.mode === mode && r.targetRatio === 8);
  const verdicts: string[] = [];
  for (const mode of modes) {
    for (const set of ['personal', 'personal-noisy']) {
      const personal = at8(set, mode);
      if (personal) {
        // A window that kept nothing counts as one fact, so the multiple stays finite and honest.
        const multiple = personal.retained / Math.max(1, personal.windowRetained);
        const shown = `${multiple.toFixed(1)}x${personal.windowRetained === 0 ? ' (window kept none; counted as 1)' : ''}`;
        verdicts.push(
          `target: ${set} ${mode} at 1/8 keeps ${(personal.retainedShare * 100).toFixed(1)}% of the facts, ${shown} a same-size window's ${(personal.windowShare * 100).toFixed(1)}% (goal >= ${WINDOW_MULTIPLE_TARGET}x): ${multiple >= WINDOW_MULTIPLE_TARGET ? 'MET' : 'MISSED'}`,
        );
      }
    }
    const ids = at8('agent-ids', mode);
    if (ids)
      verdicts.push(
        `target: agent-ids ${mode} at 1/8 keeps ${(ids.retainedShare * 100).toFixed(1)}% of the ids the remaining actions need (window ${(ids.windowShare * 100).toFixed(1)}%; goal >= ${ACTION_IDS_TARGET * 100}%): ${ids.retainedShare >= ACTION_IDS_TARGET ? 'MET' : 'MISSED'}`,
      );
  }
  return { rows, runs, verdicts };
}

await main();
