/**
 * Minimal OpenAI Agents SDK integration with the console exporter.
 *
 *   npm run example:agents-sdk-minimal             # offline (local scripted model)
 *   OPENAI_API_KEY=sk-... npm run example:agents-sdk-minimal   # real OpenAI API
 *
 * The small context window (6,000 tokens) makes compaction visible after a few turns.
 */
import { Agent, MemorySession, OpenAIProvider, Runner, setTracingDisabled, tool } from '@openai/agents';
import { CompactManager } from 'agent-compaction';
import { consoleExporter } from 'agent-compaction/exporters';
import { compactionInputFilter } from 'agent-compaction/openai-agents';
import { z } from 'zod';
import { fakeFile, modelEndpoint } from './support/offline-model.js';

const endpoint = await modelEndpoint('OPENAI_API_KEY', {
  tool: 'read_file',
  argumentsFor: (n) => ({ path: `src/module-${n}.ts` }),
});
setTracingDisabled(true);

// --- the integration: fewer than 10 lines ---
const manager = new CompactManager({
  model: 'gpt-4o',
  maxContextTokens: 6000,
  policy: {
    triggerPct: 0.6,
    hardCapBuffer: 600,
    keepRecentTurns: 2,
    keepToolIoPairs: 1,
    maxSummaryTokens: 300,
  },
  exporters: [consoleExporter({ format: 'pretty', stream: process.stdout })],
});
const runner = new Runner({
  modelProvider: new OpenAIProvider({
    apiKey: endpoint.apiKey,
    ...(endpoint.openaiBaseURL ? { baseURL: endpoint.openaiBaseURL } : {}),
  }),
});
const callModelInputFilter = compactionInputFilter(manager, { sessionId: 'minimal-demo' });
// ---------------------------------------------

const readFile = tool({
  name: 'read_file',
  description: 'Read a source file',
  parameters: z.object({ path: z.string() }),
  execute: async ({ path }) => fakeFile(path),
});
const agent = new Agent({
  name: 'Assistant',
  instructions: 'You explain source files. Always read the file first. Answer in one sentence.',
  tools: [readFile],
  model: endpoint.offline ? 'gpt-4o' : (process.env.OPENAI_MODEL ?? 'gpt-4o-mini'),
});
const session = new MemorySession();

let compactions = 0;
manager.on('compact.pruned_messages', () => compactions++);
for (let turn = 1; turn <= 6; turn++) {
  const result = await runner.run(agent, `Explain src/module-${turn}.ts`, { session, callModelInputFilter });
  console.log(`turn ${turn}: ${String(result.finalOutput).replace(/\s+/g, ' ').slice(0, 80)}`);
}
await manager.shutdown();
await endpoint.close();
console.log(`compactions: ${compactions}`);
