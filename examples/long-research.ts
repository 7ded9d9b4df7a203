/**
 * A long research session on the Vercel AI SDK: dozens of searches over many turns, far more
 * than the context window holds. The compaction middleware compacts the prompt before every
 * model call, so the session goes through several compaction rounds with one rolling summary.
 *
 *   npm run example:long-research                  # offline (local scripted model)
 *   OPENAI_API_KEY=sk-... npm run example:long-research        # real OpenAI API
 */
import { createOpenAI } from '@ai-sdk/openai';
import { CompactManager } from 'agent-compaction';
import { type AiSdkMessage, aiSdkToChat, compactionMiddleware } from 'agent-compaction/ai-sdk';
import { generateText, type ModelMessage, stepCountIs, tool, wrapLanguageModel } from 'ai';
import { z } from 'zod';
import { modelEndpoint } from './support/offline-model.js';

const endpoint = await modelEndpoint('OPENAI_API_KEY', {
  tool: 'search',
  callsPerTurn: 4,
  argumentsFor: (n) => ({ query: `battery chemistry source ${n}` }),
  answerFor: (result) => `Noted: ${result.slice(0, 70)}`,
});

const manager = new CompactManager({
  model: 'gpt-4o',
  maxContextTokens: 8000,
  policy: {
    triggerPct: 0.7,
    hardCapBuffer: 800,
    keepRecentTurns: 2,
    keepToolIoPairs: 3,
    strategy: 'brief',
    maxSummaryTokens: 500,
  },
});
let rounds = 0;
let maxRequest = 0;
manager.on('compact.token_estimate', (event) => {
  maxRequest = Math.max(maxRequest, event.properties.tEst);
});
manager.on('compact.pruned_messages', (event) => {
  rounds++;
  console.log(
    `round ${rounds}: ${event.properties.tokensBefore} -> ${event.properties.tokensAfter} tokens, summary v${event.properties.version}, ${event.properties.prunedCount} messages folded in`,
  );
});
manager.on('compact.reduction', (event) => {
  console.log(
    `  ${event.properties.level}: ${event.properties.count} messages, ${event.properties.tokensSaved} tokens saved`,
  );
});

const provider = createOpenAI({
  apiKey: endpoint.apiKey,
  ...(endpoint.openaiBaseURL ? { baseURL: endpoint.openaiBaseURL } : {}),
});
const model = wrapLanguageModel({
  model: provider.chat(endpoint.offline ? 'gpt-4o' : (process.env.OPENAI_MODEL ?? 'gpt-4o-mini')),
  middleware: compactionMiddleware(manager, { sessionId: 'research-1' }),
});

let sourceNumber = 0;
const tools = {
  search: tool({
    description: 'Search the literature',
    inputSchema: z.object({ query: z.string() }),
    execute: async ({ query }) => {
      sourceNumber++;
      return `Source ${sourceNumber} for "${query}": ${'Solid-state electrolytes raise energy density while dendrite growth limits cycle life. '.repeat(16)}`;
    },
  }),
};

const system = 'You are a research assistant. Search, then note one finding per question.';
const messages: ModelMessage[] = [];
const questions = 10;
for (let q = 1; q <= questions; q++) {
  messages.push({
    role: 'user',
    content: `Question ${q}: what limits solid-state battery cycle life (aspect ${q})?`,
  });
  const result = await generateText({ model, system, tools, messages, stopWhen: stepCountIs(8) });
  messages.push(...result.response.messages);
  console.log(
    `question ${q}: ${result.steps.length} steps, ${result.text.replace(/\s+/g, ' ').slice(0, 60)}`,
  );
}

const fullHistory = manager.estimate(aiSdkToChat(messages as AiSdkMessage[]), { system }).total;
console.log(
  `history: ${messages.length} messages, ~${fullHistory} tokens; largest request sent: ${maxRequest} tokens (budget ${manager.budget})`,
);
console.log(`compaction rounds: ${rounds}`);
await manager.shutdown();
await endpoint.close();
