/**
 * The figures eval/recall-sets.test.ts and eval/instruction-retention.test.ts guard, printed
 * (agent ids at 1/8 direct, direct-rolling and with a preflight before every call, planted facts
 * at 20:1, personal facts at 1/8, the user's instructions held at 8k), to compare two versions
 * of the cascade in one sitting: `npx tsx eval/recall-figures.ts`.
 */
import { EmbeddedSummarizer } from '../src/core/summary/embedded-summarizer.js';
import { agentIdSession } from './agent-id-sessions.js';
import { aggregateRuns, formatTable, runFidelity } from './fidelity-harness.js';
import { runInstructionSession } from './instruction-retention.js';
import { instructionSession } from './instruction-sessions.js';
import { personalSession } from './personal-sessions.js';
import { plantedSession } from './planted-session.js';

const embedded = () => [{ label: 'embedded', summarizer: new EmbeddedSummarizer() }];
const agentIds = () => [agentIdSession({ seed: 1 }), agentIdSession({ seed: 2 })];
const runs = [
  ...(await runFidelity({
    sets: { personal: [personalSession({ seed: 1 }), personalSession({ seed: 2 })], 'agent-ids': agentIds() },
    summarizers: embedded(),
    strategies: ['task_state'],
    ratios: [8],
    modes: ['direct', 'direct-rolling'],
  })),
  ...(await runFidelity({
    sets: { 'agent-ids': agentIds() },
    summarizers: embedded(),
    strategies: ['task_state'],
    ratios: [8],
    modes: ['rolling'],
  })),
  ...(await runFidelity({
    sets: { planted: [plantedSession({ seed: 1 })] },
    summarizers: embedded(),
    strategies: ['task_state'],
    ratios: [20],
    modes: ['rolling'],
  })),
];
console.log(formatTable(aggregateRuns(runs)));
for (const run of runs.filter((r) => r.mode === 'rolling'))
  console.log(`rolling ${run.set}: ${run.compactions} compactions`);
const asks = await runInstructionSession(
  instructionSession({ kind: 'coding', seed: 1, calls: 120, instructions: [8, 8] }),
  8_000,
);
console.log(
  `asks at 8k: ${asks.held}/${asks.pairs} pairs held (${((100 * asks.held) / asks.pairs).toFixed(1)}%), ${asks.summaries} summaries, max request ${asks.maxRequestTokens}`,
);
