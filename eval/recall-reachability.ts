/**
 * `npx tsx eval/recall-reachability.ts`: how many key facts the agent can still reach after
 * compaction when it has the recall tool, next to how many the compacted context keeps.
 *
 * Runs the planted-fact sessions of the fidelity harness (eval/planted-session.ts) through the
 * real CompactManager exactly as eval/fidelity-harness.ts configures it (embedded summarizer,
 * task_state, one-shot and rolling, 5:1 / 10:1 / 20:1), with an in-memory archive behind a
 * RecallArchive. For each fact:
 * - in view: every probe is in the compacted context (summary + kept messages), the harness's measure;
 * - reachable: in view, or every probe is in the text ONE recall query returns (the tool's
 *   own output, 5 passages), the query naming the fact's subject, never its value:
 *   the words of the sentence (or output line) that carries the fact with the fact's probes
 *   removed; for prose facts (constraints, decisions, tasks), whose probe is the whole
 *   statement, the first three content words of the probe (how one names a topic).
 * The harness's own figures for the same runs are printed alongside as a cross-check.
 *
 * Flags: `--seeds N` (default 5), `--ratios 5,10,20`, `--json`.
 */
import { parseArgs } from 'node:util';
import { isCompactError } from '../src/core/errors.js';
import { CompactManager } from '../src/core/manager/compact-manager.js';
import { RecallArchive } from '../src/recall/recall-archive.js';
import { runRecallTool } from '../src/recall/recall-tool.js';
import { memoryStorage } from '../src/storage/memory/memory-storage.js';
import {
  aggregateRuns,
  assertFactsPresent,
  type CompactionMode,
  contextText,
  factPresent,
  runFidelity,
} from './fidelity-harness.js';
import { type FidelitySession, type KeyFact, plantedSession } from './planted-session.js';
import { textTable } from './text-table.js';

const normalize = (text: string) => text.replace(/\s+/g, ' ').toLowerCase();

const STOP = new Set(
  'a an and are as at be by for from has have in is it its of on or that the this to was we will with our not no all any can may must you your i let us please'.split(
    ' ',
  ),
);

function contentWords(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}_/.-]+/gu) ?? [])
    .map((word) => word.replace(/^[./-]+|[./-]+$/g, ''))
    .filter((word) => word.length >= 3 && !STOP.has(word));
}

/** Facts whose probe is the whole statement (they have no separate value to hide). */
const PROSE_KINDS = new Set(['constraint', 'decision', 'open_task']);

/** The tool call a tool message answers, as `name arguments` text. */
function callOf(session: FidelitySession, index: number): string {
  const id = session.messages[index]?.tool_call_id;
  for (let k = index - 1; k >= 0; k--) {
    const calls = (session.messages[k]?.tool_calls ?? []) as {
      id: string;
      function: { name: string; arguments: string };
    }[];
    const call = calls.find((c) => c.id === id);
    if (call) return `${call.function.name} ${call.function.arguments}`;
  }
  return '';
}

/**
 * The query naming a fact's subject (see the file comment): the words around the fact in the
 * sentence or output line that carries it (plus, for a tool output, the call that produced
 * it), the fact's own probes removed; for prose facts with too few such words, the first
 * three content words of the statement. Never the value of a value fact.
 */
export function subjectQuery(fact: KeyFact, session: FidelitySession): string {
  const message = session.messages[fact.messageIndex]!;
  const carrier = contextText([message]);
  const pieces = carrier.split(/\n|(?<=[.!?])\s+/);
  const probe = fact.probes[0]!.toLowerCase();
  let around = (pieces.find((p) => p.toLowerCase().includes(probe)) ?? '').toLowerCase();
  for (const p of fact.probes) around = around.split(p.toLowerCase()).join(' ');
  if (message.role === 'tool') around = `${around} ${callOf(session, fact.messageIndex)}`;
  const probeWords = new Set(fact.probes.flatMap(contentWords));
  // Line numbers and counts from the output are not something one names a subject by.
  const words = [...new Set(contentWords(around))]
    .filter((word) => !probeWords.has(word) && !/^\d+$/.test(word))
    .slice(0, 8);
  if (PROSE_KINDS.has(fact.kind) && words.length < 2)
    return contentWords(fact.probes[0]!).slice(0, 3).join(' ');
  return words.join(' ');
}

interface Tally {
  facts: number;
  inView: number;
  reachable: number;
  summarized: number;
  summarizedInView: number;
  summarizedReachable: number;
  runs: number;
  failures: number;
  artifacts: number;
}

async function runOnce(
  session: FidelitySession,
  mode: CompactionMode,
  ratio: number,
  share: number,
  tally: Tally,
  misses: string[],
  queries: Map<string, string>,
): Promise<void> {
  const messages: Record<string, unknown>[] = session.messages.map((message, index) => ({
    ...message,
    meta: { id: `raw-${index}` },
  }));
  const probe = new CompactManager({ model: 'gpt-4o', maxContextTokens: 10_000_000 });
  const rawTokens = probe.estimate(messages).total;
  const pinnedTokens = probe.estimate(
    messages.filter((m) => m.role === 'system' || m.role === 'developer'),
  ).total;
  const contextBudget = pinnedTokens + Math.max(64, Math.floor((rawTokens - pinnedTokens) / ratio));
  const storage = memoryStorage();
  const recall = new RecallArchive(storage);
  const manager = new CompactManager({
    model: 'gpt-4o',
    maxContextTokens: contextBudget,
    storage: recall.storage,
    redaction: false,
    policy: {
      strategy: 'task_state',
      maxSummaryTokens: Math.max(16, Math.floor((contextBudget - pinnedTokens) * share)),
      hardCapBuffer: 0,
      triggerPct: mode === 'one-shot' ? 1 : 0.85,
    },
  });
  const sessionId = `planted/${session.name}`;
  let output: unknown[];
  if (mode === 'one-shot') output = (await manager.manualCompact(sessionId, messages)).messages;
  else {
    for (let end = 1; end < messages.length; end++)
      if ((messages[end] as { role?: string }).role === 'assistant')
        await manager.preflight(sessionId, messages.slice(0, end));
    output = (await manager.compact(sessionId, messages)).messages;
  }
  const covered = new Set((await manager.state(sessionId))?.coveredIds ?? []);
  await manager.shutdown();
  const view = normalize(contextText(output));
  tally.runs++;
  tally.artifacts += (await storage.listArtifacts(sessionId)).length;
  for (const fact of session.facts) {
    const inView = factPresent(fact, view);
    let reachable = inView;
    if (!inView) {
      const query = subjectQuery(fact, session);
      queries.set(`${fact.kind}: ${fact.probes.join(' + ')}`, query);
      const answer =
        query === '' ? { isError: true, text: '' } : await runRecallTool(recall, sessionId, { query });
      reachable = !answer.isError && factPresent(fact, normalize(answer.text));
      if (!reachable)
        misses.push(
          `${session.name} ${mode} ${ratio}:1 ${fact.kind} "${fact.probes.join(' + ')}" <- query "${query}"`,
        );
    }
    const summarized = covered.has(`raw-${fact.messageIndex}`);
    tally.facts++;
    if (inView) tally.inView++;
    if (reachable) tally.reachable++;
    if (summarized) {
      tally.summarized++;
      if (inView) tally.summarizedInView++;
      if (reachable) tally.summarizedReachable++;
    }
  }
}

const pct = (part: number, whole: number) =>
  whole > 0 ? `${((part / whole) * 100).toFixed(1)}% (${part}/${whole})` : 'n/a';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      seeds: { type: 'string', default: '5' },
      ratios: { type: 'string', default: '5,10,20' },
      json: { type: 'boolean', default: false },
      verbose: { type: 'boolean', default: false },
    },
  });
  const sessions = Array.from({ length: Number(values.seeds) }, (_, k) => plantedSession({ seed: k + 1 }));
  for (const session of sessions) assertFactsPresent(session);
  const ratios = values.ratios.split(',').map(Number);
  const modes: CompactionMode[] = ['one-shot', 'rolling'];
  const rows: (Tally & { mode: CompactionMode; ratio: number })[] = [];
  const misses: string[] = [];
  const queries = new Map<string, string>();
  for (const mode of modes) {
    for (const ratio of ratios) {
      const tally: Tally = {
        facts: 0,
        inView: 0,
        reachable: 0,
        summarized: 0,
        summarizedInView: 0,
        summarizedReachable: 0,
        runs: 0,
        failures: 0,
        artifacts: 0,
      };
      for (const session of sessions) {
        let done = false;
        for (const share of [0.5, 0.3, 0.15]) {
          try {
            await runOnce(session, mode, ratio, share, tally, misses, queries);
            done = true;
            break;
          } catch (error) {
            if (!isCompactError(error, 'insufficient_budget')) throw error;
          }
        }
        if (!done) tally.failures++;
      }
      rows.push({ mode, ratio, ...tally });
    }
  }
  const harness = aggregateRuns(
    await runFidelity({
      sets: { planted: sessions },
      summarizers: [
        {
          label: 'embedded',
          summarizer: new (await import('../src/core/summary/embedded-summarizer.js')).EmbeddedSummarizer(),
        },
      ],
      strategies: ['task_state'],
      ratios,
      modes,
    }),
  );
  if (values.json) {
    process.stdout.write(
      `${JSON.stringify({ generatedBy: 'eval/recall-reachability.ts', rows, harness, misses }, null, 2)}\n`,
    );
    return;
  }
  const total = sessions.reduce((n, s) => n + s.facts.length, 0);
  console.log(
    `recall reachability: ${sessions.length} planted sessions, ${total} facts; embedded task_state; one recall query per fact not in view`,
  );
  console.log('');
  const header = [
    'mode',
    'target',
    'in view (harness: retained)',
    'reachable (view or 1 query)',
    'summarized: kept in summary',
    'summarized: reachable',
    'harness retained',
    'harness of summarized',
    'artifacts/run',
  ];
  const lines = rows.map((row) => {
    const h = harness.find((r) => r.mode === row.mode && r.targetRatio === row.ratio);
    return [
      row.mode,
      `${row.ratio}:1`,
      pct(row.inView, row.facts),
      pct(row.reachable, row.facts),
      pct(row.summarizedInView, row.summarized),
      pct(row.summarizedReachable, row.summarized),
      h ? pct(h.retained, h.facts) : '-',
      h ? pct(h.retainedSummarized, h.summarizedFacts) : '-',
      row.runs ? (row.artifacts / row.runs).toFixed(1) : '-',
    ];
  });
  console.log(textTable(header, lines));
  console.log('');
  console.log(`not reachable: ${misses.length} fact-runs${values.verbose ? '' : ' (--verbose lists them)'}`);
  if (values.verbose) {
    for (const miss of misses) console.log(`  ${miss}`);
    console.log('queries used (fact <- query):');
    for (const [fact, query] of queries) console.log(`  ${fact} <- "${query}"`);
  }
}

await main();
