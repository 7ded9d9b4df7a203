/**
 * Which planted facts rolling compaction loses, and at which compaction (issue 45 point 4):
 * every summary the built-in summarizer writes is recorded, and each lost fact is traced to
 * the compaction whose input held it and whose output did not, with that round's room and
 * the previous summary's size (a room under the previous size is a squeezed round).
 *
 * `npx tsx eval/rolling-losses.ts [--seeds 1,2,3,4,5] [--ratio 20]`
 */
import { parseArgs } from 'node:util';
import { EmbeddedSummarizer } from '../src/core/summary/embedded-summarizer.js';
import type { SummarizeRequest, SummarizeResult } from '../src/core/summary/summarizer.js';
import { normalize } from './context-measures.js';
import { runFidelity } from './fidelity-harness.js';
import { plantedSession } from './planted-session.js';

interface Round {
  input: string;
  output: string;
  room: number;
  tokens: number;
}

/** The built-in summarizer, recording each round. */
class RecordingSummarizer extends EmbeddedSummarizer {
  rounds: Round[] = [];
  override async summarize(request: SummarizeRequest): Promise<SummarizeResult> {
    const result = await super.summarize(request);
    const input = request.messages
      .map((m) =>
        [m.text, ...m.toolResults.map((r) => r.output), ...m.toolCalls.map((c) => c.arguments)].join('\n'),
      )
      .join('\n');
    this.rounds.push({
      input,
      output: result.text,
      room: request.maxTokens,
      tokens: request.countTokens(result.text),
    });
    return result;
  }
}

const holds = (text: string, probes: readonly string[]) => {
  const flat = normalize(text);
  return probes.every((probe) => flat.includes(normalize(probe)));
};

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { seeds: { type: 'string', default: '1,2,3,4,5' }, ratio: { type: 'string', default: '20' } },
  });
  const ratio = Number(values.ratio);
  let retained = 0;
  let facts = 0;
  for (const seed of values.seeds.split(',').map(Number)) {
    const session = plantedSession({ seed });
    const summarizer = new RecordingSummarizer();
    const [run] = await runFidelity({
      sets: { planted: [session] },
      summarizers: [{ label: 'embedded', summarizer }],
      strategies: ['task_state'],
      ratios: [ratio],
      modes: ['rolling'],
    });
    if (!run) continue;
    retained += run.retained;
    facts += run.facts;
    const rounds = summarizer.rounds;
    console.log(`seed ${seed}: ${run.retained}/${run.facts} kept, ${rounds.length} compactions`);
    for (const fact of session.facts) {
      if (!run.missing.includes(fact.probes.join(' + '))) continue;
      const folded = rounds.findIndex((r) => holds(r.input, fact.probes));
      const lost = rounds.findIndex((r, k) => k >= folded && folded >= 0 && !holds(r.output, fact.probes));
      const at = rounds[lost];
      const previous = lost > 0 ? rounds[lost - 1]!.tokens : 0;
      const how =
        folded < 0
          ? 'never folded'
          : lost === folded
            ? 'left out when folded'
            : `carried ${lost - folded} rounds, then dropped${at && at.room < previous ? ' (squeezed round)' : ''}`;
      console.log(
        `  ${fact.id}: folded at ${folded}, lost at ${lost}: ${how}; room ${at?.room} (previous summary ${previous}), written ${at?.tokens}`,
      );
    }
  }
  console.log(
    `rolling ${ratio}:1: ${retained}/${facts} = ${((100 * retained) / Math.max(1, facts)).toFixed(1)}%`,
  );
}

await main();
