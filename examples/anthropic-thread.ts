/**
 * Compaction in a Slack-style agent on the Anthropic SDK: before each reply the thread (the
 * full thread, every turn) goes through `compactThreadHistory`, a thin helper over the
 * manager, with spec 004's summary sections written by an Anthropic summarizer.
 *
 *   npm run example:anthropic-thread               # offline (local Anthropic-compatible server)
 *   ANTHROPIC_API_KEY=sk-ant-... ANTHROPIC_MODEL=<your model> npm run example:anthropic-thread
 */
import Anthropic from '@anthropic-ai/sdk';
import { CompactManager } from 'agent-compaction';
import { compactThreadHistory, THREAD_SUMMARY_SYSTEM_PROMPT } from 'agent-compaction/anthropic';
import { anthropicSummarizer } from 'agent-compaction/summarizers/anthropic';
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
const manager = new CompactManager({
  model,
  maxContextTokens: Number(process.env.ANTHROPIC_MAX_CONTEXT_TOKENS ?? 4000),
  policy: { maxSummaryTokens: 400 },
  summarizer: anthropicSummarizer({
    model,
    client: anthropic,
    prompts: { default: THREAD_SUMMARY_SYSTEM_PROMPT },
  }),
});

const systemPrompt = 'You are Orion, a concise assistant in a Slack workspace.';
const thread: Anthropic.MessageParam[] = [];
let compactions = 0;

for (let turn = 1; turn <= 14; turn++) {
  const userMessage = `Message ${turn}: status update on the ORION-API deployment, with logs: ${'step ok; '.repeat(100)}`;
  const compaction = await compactThreadHistory({
    manager,
    sessionId: 'thread-1',
    systemPrompt,
    threadHistory: thread,
    userMessage,
    traceId: `thread-${turn}`,
  });
  if (compaction.applied) {
    compactions++;
    const body = compaction.summary?.text.split('\n')[1] ?? '';
    console.log(
      `turn ${turn}: compacted ${compaction.tokensBefore} -> ${compaction.tokensAfter} tokens; summary starts "${body}"`,
    );
  }
  const reply = await anthropic.messages.create({
    model,
    system: systemPrompt,
    max_tokens: 300,
    messages: compaction.messages,
  });
  const text = reply.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
  thread.push({ role: 'user', content: userMessage }, { role: 'assistant', content: text });
  console.log(`turn ${turn}: ${text.replace(/\s+/g, ' ').slice(0, 70)}`);
}
console.log(`compactions: ${compactions}; thread now ${thread.length} messages`);
await endpoint.close();
