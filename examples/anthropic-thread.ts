/**
 * Compaction in a Slack-style agent on the Anthropic SDK (spec 004): before each reply the
 * thread is compacted when system prompt + history + new message approach the context window
 * (ANTHROPIC_MAX_CONTEXT_TOKENS), best-effort within COMPACTION_TIMEOUT_MS.
 *
 *   npm run example:anthropic-thread               # offline (local Anthropic-compatible server)
 *   ANTHROPIC_API_KEY=sk-ant-... ANTHROPIC_MODEL=<your model> npm run example:anthropic-thread
 */
import Anthropic from '@anthropic-ai/sdk';
import { compactThreadHistory, type HistoryMessage } from '../src/adapters/anthropic/index.js';
import { modelEndpoint } from './support/offline-model.js';

const endpoint = await modelEndpoint('ANTHROPIC_API_KEY', {
  tool: 'unused',
  callsPerTurn: 0,
  answerFor: (_, userText) => `Noted (${userText.slice(0, 40)}).`,
  summaryFor: () =>
    'Preferences: short answers, bullet lists.\nFacts & Decisions: deploy window is Friday 14:00 UTC; service ORION-API uses Postgres 15.\nOpen Items: confirm rollback plan.\nKey Context: never post secrets in the thread.',
});
// The model comes from configuration, never from the code.
const model = process.env.ANTHROPIC_MODEL ?? 'offline-model';
const anthropic = new Anthropic({
  apiKey: endpoint.apiKey,
  ...(endpoint.anthropicBaseURL ? { baseURL: endpoint.anthropicBaseURL } : {}),
  maxRetries: 1,
});

const systemPrompt = 'You are Orion, a concise assistant in a Slack workspace.';
const thread: HistoryMessage[] = [];
const env = {
  ...process.env,
  ANTHROPIC_MAX_CONTEXT_TOKENS: process.env.ANTHROPIC_MAX_CONTEXT_TOKENS ?? '4000',
};
let compactions = 0;

for (let turn = 1; turn <= 14; turn++) {
  const userMessage = `Message ${turn}: status update on the ORION-API deployment, with logs: ${'step ok; '.repeat(100)}`;
  const compaction = await compactThreadHistory({
    systemPrompt,
    threadHistory: thread,
    userMessage,
    anthropic,
    model,
    maxSummaryTokens: 400,
    keepLastN: 4,
    traceId: `thread-${turn}`,
    env,
  });
  if (compaction.compactionApplied) {
    compactions++;
    console.log(
      `turn ${turn}: compacted ${compaction.originalEstimatedTokens} -> ${compaction.compactedEstimatedTokens} tokens; summary starts "${compaction.summary.split('\n')[0]}"`,
    );
    thread.splice(0, thread.length, ...compaction.compactedHistory);
  }
  const reply = await anthropic.messages.create({
    model,
    system: systemPrompt,
    max_tokens: 300,
    messages: [...thread, { role: 'user', content: userMessage }] as Anthropic.MessageParam[],
  });
  const text = reply.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
  thread.push({ role: 'user', content: userMessage }, { role: 'assistant', content: text });
  console.log(`turn ${turn}: ${text.replace(/\s+/g, ' ').slice(0, 70)}`);
}
console.log(`compactions: ${compactions}; thread now ${thread.length} messages`);
await endpoint.close();
