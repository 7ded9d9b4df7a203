/**
 * core-81: a compacted request never opens with an assistant turn and never parts a tool call
 * from its result, in every form an integration sends it in, for random histories: a system
 * prompt or not, a long first user message (folded), tool rounds of one or two calls, reasoning,
 * rounds pinned (a protected result pins its round) early and late, user words between rounds.
 * The forms: the AI SDK's (`compactMessages`, both message kinds), LangChain's (the middleware's
 * `wrapModelCall`, its handler recording the call), Chat as the proxy sends it (the manager's
 * result through the core's `summaryFirst`, as `src/proxy/compact-request.ts` does) and
 * Anthropic (the manager's own order: `withCompaction` and the proxy's Anthropic route) and the
 * OpenAI Agents SDK's Responses items (`compactionInputFilter`).
 * Deterministic: FC_SEED explores other seeds, FC_RUNS runs more cases.
 */
import {
  AIMessage,
  type BaseMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
} from '@langchain/core/messages';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compactMessages } from '../../src/adapters/ai-sdk/index.js';
import { compactionMiddleware } from '../../src/adapters/langchain/index.js';
import { compactionInputFilter } from '../../src/adapters/openai-agents/index.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { CHAT_TURNS, isSummaryText, summaryFirst } from '../../src/core/messages/summary-first.js';

const SEED = Number(process.env.FC_SEED ?? 20_261_201);
const RUNS = Number(process.env.FC_RUNS ?? 12);

const roundArb = fc.record({
  userWords: fc.boolean(),
  calls: fc.integer({ min: 0, max: 2 }),
  reasoning: fc.boolean(),
  lines: fc.integer({ min: 2, max: 40 }),
});
const historyArb = fc.record({
  system: fc.boolean(),
  firstWords: fc.integer({ min: 300, max: 1500 }),
  rounds: fc.array(roundArb, { minLength: 10, maxLength: 28 }),
  // Rounds whose results are protected (their round pinned with them), early ones among them.
  pinned: fc.uniqueArray(fc.integer({ min: 0, max: 27 }), { maxLength: 3 }),
  pinEarly: fc.integer({ min: 0, max: 3 }),
});
type History = typeof historyArb extends fc.Arbitrary<infer T> ? T : never;

/** A neutral turn, rendered in each form. */
type Turn =
  | { kind: 'system'; text: string }
  | { kind: 'user'; text: string }
  | { kind: 'assistant'; text: string; reasoning?: string; calls: string[] }
  | { kind: 'result'; id: string; text: string; pinned: boolean };

function turnsOf(h: History): Turn[] {
  const pinned = new Set([...h.pinned, h.pinEarly]);
  const turns: Turn[] = h.system ? [{ kind: 'system', text: 'You are an SRE agent.' }] : [];
  turns.push({
    kind: 'user',
    text: `The spec: ${'every request is validated and logged. '.repeat(h.firstWords / 5)}`,
  });
  h.rounds.forEach((round, k) => {
    if (round.userWords && k > 0) turns.push({ kind: 'user', text: `Task ${k}: probe the next host.` });
    const reasoning = round.reasoning ? { reasoning: `Thinking about step ${k}. `.repeat(6) } : {};
    const calls = Array.from({ length: round.calls }, (_, c) => `c${k}_${c}`);
    turns.push({ kind: 'assistant', text: calls.length > 0 ? '' : `Step ${k} done.`, calls, ...reasoning });
    for (const id of calls) {
      const text = Array.from(
        { length: round.lines },
        (_, l) => `${id} line ${l}: status=ok host=web-${l}`,
      ).join('\n');
      turns.push({ kind: 'result', id, text, pinned: pinned.has(k) });
    }
    if (calls.length > 0) turns.push({ kind: 'assistant', text: `Step ${k} done.`, calls: [] });
  });
  turns.push({ kind: 'user', text: 'Next?' });
  return turns;
}

/** What the checks read of a sent message. */
interface Shape {
  role: 'system' | 'user' | 'assistant' | 'tool';
  calls: string[];
  results: string[];
  summary: boolean;
}

/** Fails with the request's shape when it opens with a turn other than a user's or parts a call from its result. */
function checkShapes(form: string, shapes: Shape[]): void {
  const show = () =>
    `${form}: ${shapes.map((s) => `${s.role}${s.summary ? '*' : ''}[${[...s.calls, ...s.results]}]`).join(' ')}`;
  const first = shapes.find((shape) => shape.role !== 'system');
  expect(first?.role, show()).toBe('user');
  expect(first?.results, show()).toEqual([]);
  for (let i = 0; i < shapes.length; i++) {
    const open = new Set(shapes[i]!.calls);
    let j = i + 1;
    for (; open.size > 0 && shapes[j]?.role === 'tool'; j++)
      for (const id of shapes[j]!.results) open.delete(id);
    expect([...open], `${show()}: calls of message ${i} without their results`).toEqual([]);
  }
  const answered = new Set<string>();
  let calls = new Set<string>();
  for (const shape of shapes) {
    if (shape.role !== 'tool') calls = new Set(shape.calls);
    for (const id of shape.results) {
      expect(calls.has(id) && !answered.has(id), `${show()}: result ${id} apart from its call`).toBe(true);
      answered.add(id);
    }
  }
}

const SUMMARY = '<COMPACT-SUMMARY v';

function aiSdkMessages(turns: Turn[]): Record<string, unknown>[] {
  return turns.map((turn) => {
    if (turn.kind === 'system') return { role: 'system', content: turn.text };
    if (turn.kind === 'user') return { role: 'user', content: [{ type: 'text', text: turn.text }] };
    if (turn.kind === 'result')
      return {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: turn.id,
            toolName: 'probe',
            output: { type: 'text', value: turn.text },
          },
        ],
        ...(turn.pinned ? { providerOptions: { agentCompaction: { protected: true } } } : {}),
      };
    return {
      role: 'assistant',
      content: [
        ...(turn.reasoning ? [{ type: 'reasoning', text: turn.reasoning }] : []),
        ...(turn.text ? [{ type: 'text', text: turn.text }] : []),
        ...turn.calls.map((id) => ({ type: 'tool-call', toolCallId: id, toolName: 'probe', input: {} })),
      ],
    };
  });
}

function aiSdkShape(message: Record<string, unknown>): Shape {
  const parts = (typeof message.content === 'string' ? [] : message.content) as Record<string, unknown>[];
  const ids = (type: string) => parts.filter((p) => p.type === type).map((p) => String(p.toolCallId));
  return {
    role: message.role as Shape['role'],
    calls: ids('tool-call'),
    results: ids('tool-result'),
    summary: JSON.stringify(message.content).includes(SUMMARY),
  };
}

function langChainMessages(turns: Turn[]): BaseMessage[] {
  return turns.map((turn) => {
    if (turn.kind === 'system') return new SystemMessage(turn.text);
    if (turn.kind === 'user') return new HumanMessage(turn.text);
    if (turn.kind === 'result')
      return new ToolMessage({
        content: turn.text,
        tool_call_id: turn.id,
        ...(turn.pinned ? { additional_kwargs: { agentCompaction: { protected: true } } } : {}),
      });
    const blocks = [
      ...(turn.reasoning ? [{ type: 'thinking', thinking: turn.reasoning, signature: 'sig' }] : []),
      ...(turn.text ? [{ type: 'text', text: turn.text }] : []),
    ];
    return new AIMessage({
      content: turn.reasoning ? blocks : turn.text,
      tool_calls: turn.calls.map((id) => ({ id, name: 'probe', args: {}, type: 'tool_call' as const })),
    });
  });
}

function langChainShape(message: BaseMessage): Shape {
  const type = message.getType();
  const role =
    type === 'system' ? 'system' : type === 'human' ? 'user' : type === 'tool' ? 'tool' : 'assistant';
  return {
    role,
    calls: ((message as AIMessage).tool_calls ?? []).map((call) => String(call.id)),
    results: type === 'tool' ? [(message as ToolMessage).tool_call_id] : [],
    summary: JSON.stringify(message.content).includes(SUMMARY),
  };
}

function chatMessages(turns: Turn[]): Record<string, unknown>[] {
  return turns.map((turn) => {
    if (turn.kind === 'system' || turn.kind === 'user') return { role: turn.kind, content: turn.text };
    if (turn.kind === 'result')
      return {
        role: 'tool',
        tool_call_id: turn.id,
        content: turn.text,
        ...(turn.pinned ? { meta: { protected: true } } : {}),
      };
    return {
      role: 'assistant',
      content: turn.text || null,
      ...(turn.reasoning ? { reasoning_content: turn.reasoning } : {}),
      ...(turn.calls.length > 0
        ? {
            tool_calls: turn.calls.map((id) => ({
              id,
              type: 'function',
              function: { name: 'probe', arguments: '{}' },
            })),
          }
        : {}),
    };
  });
}

function chatShape(message: Record<string, unknown>): Shape {
  const calls = (message.tool_calls as { id: string }[] | undefined) ?? [];
  return {
    role: message.role as Shape['role'],
    calls: calls.map((call) => call.id),
    results: message.role === 'tool' ? [String(message.tool_call_id)] : [],
    summary: JSON.stringify(message.content).includes(SUMMARY),
  };
}

function anthropicMessages(turns: Turn[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const turn of turns) {
    if (turn.kind === 'system') continue;
    if (turn.kind === 'user') out.push({ role: 'user', content: [{ type: 'text', text: turn.text }] });
    else if (turn.kind === 'result') {
      const block = { type: 'tool_result', tool_use_id: turn.id, content: turn.text };
      const last = out.at(-1);
      const blocks = last?.content as Record<string, unknown>[] | undefined;
      // The results of one turn's calls go back in one user turn.
      if (last?.role === 'user' && blocks?.every((b) => b.type === 'tool_result')) blocks.push(block);
      else out.push({ role: 'user', content: [block] });
      if (turn.pinned) out.at(-1)!.meta = { protected: true };
    } else {
      out.push({
        role: 'assistant',
        content: [
          ...(turn.reasoning ? [{ type: 'thinking', thinking: turn.reasoning, signature: 'sig' }] : []),
          ...(turn.text ? [{ type: 'text', text: turn.text }] : []),
          ...turn.calls.map((id) => ({ type: 'tool_use', id, name: 'probe', input: {} })),
        ],
      });
    }
  }
  return out;
}

function anthropicShape(message: Record<string, unknown>): Shape {
  const blocks = (typeof message.content === 'string' ? [] : message.content) as Record<string, unknown>[];
  const results = blocks.filter((b) => b.type === 'tool_result').map((b) => String(b.tool_use_id));
  return {
    role: results.length > 0 ? 'tool' : (message.role as Shape['role']),
    calls: blocks.filter((b) => b.type === 'tool_use').map((b) => String(b.id)),
    results,
    summary: JSON.stringify(message.content).includes(SUMMARY),
  };
}

function responsesItems(turns: Turn[]): Record<string, unknown>[] {
  return turns.flatMap((turn, k): Record<string, unknown>[] => {
    if (turn.kind === 'system') return [];
    if (turn.kind === 'user') return [{ type: 'message', role: 'user', content: turn.text }];
    if (turn.kind === 'result')
      return [
        {
          type: 'function_call_output',
          call_id: turn.id,
          output: turn.text,
          ...(turn.pinned ? { meta: { protected: true } } : {}),
        },
      ];
    const text = {
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: turn.text }],
    };
    return [
      ...(turn.reasoning
        ? [{ type: 'reasoning', id: `rs_${k}`, summary: [{ type: 'summary_text', text: turn.reasoning }] }]
        : []),
      ...(turn.text ? [text] : []),
      ...turn.calls.map((id) => ({ type: 'function_call', call_id: id, name: 'probe', arguments: '{}' })),
    ];
  });
}

/** Shapes of Responses items: a turn's reasoning and calls in a row are one assistant turn. */
function responsesShapes(items: Record<string, unknown>[]): Shape[] {
  const shapes: Shape[] = [];
  let turn: Shape | undefined;
  for (const item of items) {
    const summary = JSON.stringify(item.content ?? '').includes(SUMMARY);
    if (item.type === 'reasoning' || item.type === 'function_call') {
      if (!turn) {
        turn = { role: 'assistant', calls: [], results: [], summary: false };
        shapes.push(turn);
      }
      if (item.type === 'function_call') turn.calls.push(String(item.call_id));
      continue;
    }
    turn = undefined;
    if (item.type === 'function_call_output')
      shapes.push({ role: 'tool', calls: [], results: [String(item.call_id)], summary });
    else shapes.push({ role: item.role as Shape['role'], calls: [], results: [], summary });
  }
  return shapes;
}

const manager = (model: string) => new CompactManager({ model, maxContextTokens: 6_000, redaction: false });

async function checkAllForms(h: History, run: number): Promise<void> {
  const turns = turnsOf(h);
  const ai = manager('gpt-4o');
  for (const kind of ['model-messages', 'prompt'] as const) {
    const { messages } = await compactMessages(ai, `ai-${kind}-${run}`, aiSdkMessages(turns), { kind });
    checkShapes(`ai-sdk ${kind}`, messages.map(aiSdkShape));
  }
  await ai.shutdown();

  const lc = manager('gpt-4o');
  let sent: BaseMessage[] = [];
  const middleware = compactionMiddleware(lc, { sessionId: `lc-${run}` });
  await middleware.wrapModelCall!(
    { messages: langChainMessages(turns), tools: [], runtime: {} } as never,
    async (request) => {
      sent = request.messages;
      return new AIMessage('Done.');
    },
  );
  await lc.shutdown();
  checkShapes('langchain', sent.map(langChainShape));

  const chat = manager('gpt-4o');
  const result = await chat.compact(`chat-${run}`, chatMessages(turns), { format: 'openai-chat' });
  await chat.shutdown();
  const text = result.summary?.text;
  const proxied = summaryFirst(result.messages, (message) => isSummaryText(message, text), CHAT_TURNS);
  checkShapes('chat (proxy)', (proxied as Record<string, unknown>[]).map(chatShape));

  const agents = manager('gpt-4o');
  const filter = compactionInputFilter(agents, { sessionId: `agents-${run}` });
  const instructions = h.system ? { instructions: 'You are an SRE agent.' } : {};
  const filtered = await filter({
    modelData: { input: responsesItems(turns), ...instructions },
    agent: { name: 'sre', tools: [] },
    context: undefined,
  } as never);
  await agents.shutdown();
  checkShapes('openai-agents', responsesShapes(filtered.input as unknown as Record<string, unknown>[]));

  const claude = manager('claude-sonnet-4-6');
  const anthropic = await claude.compact(`anthropic-${run}`, anthropicMessages(turns), {
    format: 'anthropic',
  });
  await claude.shutdown();
  checkShapes('anthropic', (anthropic.messages as Record<string, unknown>[]).map(anthropicShape));
}

describe('a compacted request in every integration form', () => {
  it('opens with a user turn and keeps each call with its result', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(historyArb, (h) => checkAllForms(h, run++)),
      { seed: SEED, numRuns: RUNS },
    );
  }, 120_000);
});
