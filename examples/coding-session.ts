/**
 * A realistic coding assistant on the OpenAI Agents SDK: a `CompactionSession` keeps the
 * persisted history intact while the model sees a compacted view (code_delta summaries, a
 * protected task brief), and every compaction is traced to Ariadne.
 *
 *   npm run example:coding-session                 # offline: local model + local Ariadne receiver
 *   OPENAI_API_KEY=sk-... COMPACT_ARIADNE_URL=http://localhost:5175/ingest npm run example:coding-session
 */
import { Agent, MemorySession, OpenAIProvider, Runner, setTracingDisabled, tool } from '@openai/agents';
import { CompactManager } from 'agent-compaction';
import { ariadneExporter } from 'agent-compaction/exporters';
import { agentToolSchemas, CompactionSession } from 'agent-compaction/openai-agents';
import { startAriadneTestServer } from 'agent-compaction/testing';
import { z } from 'zod';
import { fakeFile, modelEndpoint } from './support/offline-model.js';

const endpoint = await modelEndpoint('OPENAI_API_KEY', {
  tool: 'read_file',
  callsPerTurn: 2,
  argumentsFor: (n) => ({ path: `src/auth/handler-${n}.ts` }),
  answerFor: (result) => `Patched: ${result.split('\n')[0]}`,
});
setTracingDisabled(true);

// Ariadne: the real viewer when COMPACT_ARIADNE_URL is set, otherwise a local receiver that
// validates every event against Ariadne's ingest contract.
const ariadne = process.env.COMPACT_ARIADNE_URL ? undefined : await startAriadneTestServer();
const ariadneUrl = process.env.COMPACT_ARIADNE_URL ?? ariadne!.ingestUrl;

const manager = new CompactManager({
  model: 'gpt-4o',
  maxContextTokens: 8000,
  policy: {
    triggerPct: 0.6,
    hardCapBuffer: 800,
    keepRecentTurns: 2,
    keepToolIoPairs: 2,
    strategy: 'code_delta',
    maxSummaryTokens: 400,
  },
  exporters: [ariadneExporter({ url: ariadneUrl, agentName: 'coding-assistant' })],
});
manager.on('compact.summary_created', (event) =>
  console.log(
    `compaction v${event.properties.version}: ${event.properties.inputMessages} messages -> ${event.properties.summaryTokens} tokens`,
  ),
);

const tools = [
  tool({
    name: 'read_file',
    description: 'Read a file of the repository',
    parameters: z.object({ path: z.string() }),
    execute: async ({ path }) => fakeFile(path, 60),
  }),
];
const agent = new Agent({
  name: 'coder',
  instructions:
    'You are a careful coding assistant. Read the relevant files, then describe the patch in one line.',
  tools,
  model: endpoint.offline ? 'gpt-4o' : (process.env.OPENAI_MODEL ?? 'gpt-4o-mini'),
});
const runner = new Runner({
  modelProvider: new OpenAIProvider({
    apiKey: endpoint.apiKey,
    ...(endpoint.openaiBaseURL ? { baseURL: endpoint.openaiBaseURL } : {}),
  }),
});

const session = new CompactionSession({
  session: new MemorySession({ sessionId: 'coding-session-1' }),
  manager,
  instructions: agent.instructions as string,
  tools: agentToolSchemas(agent),
});
// The task brief is a system item: `roles_never_prune` pins it through every compaction.
const BRIEF =
  'TASK BRIEF: migrate src/auth to the new token API; never log tokens; keep the public API stable.';
await session.addItems([{ role: 'system', content: BRIEF }]);

const tasks = [
  'Fix the login handler',
  'Add refresh-token support',
  'Remove the legacy session cookie',
  'Harden the logout path',
  'Update the auth middleware',
  'Audit token logging',
];
for (const task of tasks) {
  const result = await runner.run(agent, task, { session, callModelInputFilter: session.inputFilter() });
  console.log(`> ${task}\n  ${String(result.finalOutput).replace(/\s+/g, ' ').slice(0, 100)}`);
}

const raw = await session.getRawItems();
const view = await session.getItems();
console.log(`history: ${raw.length} items stored, ${view.length} items in the model's view`);
console.log(
  `task brief kept verbatim: ${view.some((item) => (item as { content?: unknown }).content === BRIEF)}`,
);
await manager.shutdown();
if (ariadne) {
  const spans = ariadne.events.filter((event) => event.type === 'span');
  console.log(
    `ariadne: ${spans.length} spans received (${[...new Set(spans.map((span) => span.name))].join(', ')})`,
  );
  await ariadne.close();
} else {
  console.log(`ariadne: events sent to ${ariadneUrl}`);
}
await endpoint.close();
