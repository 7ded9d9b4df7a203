/**
 * Test helpers for the SDK adapters: a scripted "agent model" for the provider test server
 * (calls a tool, then answers, like a real tool-using model), a reader that turns a recorded
 * request of any wire format into a neutral conversation, and checks run on every recorded
 * request (tool pairs intact, request within the budget).
 */
import type { CompactManager } from '../core/manager/compact-manager.js';
import type { MessageFormat } from '../core/messages/message.js';
import type { ProviderHandler, RecordedRequest, ScriptedReply } from './provider-test-server.js';

/** One entry of a request's conversation, independent of the wire format. */
export interface ConversationEntry {
  kind: 'system' | 'user' | 'assistant' | 'tool_call' | 'tool_result';
  text: string;
  callId?: string;
  name?: string;
}

/** What a recorded model request contains, format-independent. */
export interface RequestView {
  format: MessageFormat;
  /** The system prompt sent as a parameter (Responses `instructions`, Anthropic `system`). */
  system?: string;
  /** The conversation items as sent (`input` or `messages`). */
  items: unknown[];
  tools: unknown[];
  entries: ConversationEntry[];
}

function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(textOf).join('\n');
  if (value && typeof value === 'object') {
    const v = value as Record<string, unknown>;
    if (typeof v.text === 'string') return v.text;
    if ('content' in v) return textOf(v.content);
    if ('output' in v) return textOf(v.output);
  }
  return value === undefined || value === null ? '' : JSON.stringify(value);
}

/** Reads a recorded request (Chat Completions, Responses or Anthropic Messages). */
export function readRequest(request: RecordedRequest): RequestView {
  const body = (request.body ?? {}) as Record<string, unknown>;
  const tools = Array.isArray(body.tools) ? body.tools : [];
  if (request.endpoint === 'openai-responses') return readResponsesRequest(body, tools);
  const messages = (Array.isArray(body.messages) ? body.messages : []) as Record<string, unknown>[];
  if (request.endpoint === 'anthropic-messages') return readAnthropicRequest(body, messages, tools);
  return { format: 'openai-chat', items: messages, tools, entries: chatEntries(messages) };
}

/** The role of a message as an entry kind (`developer` is a system prompt). */
const roleKind = (role: string): ConversationEntry['kind'] =>
  role === 'system' || role === 'developer' ? 'system' : (role as 'user' | 'assistant');

/** A Responses request: its `input` items and its `instructions`. */
function readResponsesRequest(body: Record<string, unknown>, tools: unknown[]): RequestView {
  const items = Array.isArray(body.input) ? body.input : [{ role: 'user', content: body.input }];
  const entries: ConversationEntry[] = [];
  for (const raw of items as Record<string, unknown>[]) {
    const type = raw.type ?? 'message';
    if (type === 'message') {
      entries.push({ kind: roleKind(String(raw.role)), text: textOf(raw.content) });
    } else if (type === 'function_call') {
      entries.push({
        kind: 'tool_call',
        callId: String(raw.call_id),
        name: String(raw.name),
        text: String(raw.arguments),
      });
    } else if (type === 'function_call_output') {
      entries.push({ kind: 'tool_result', callId: String(raw.call_id), text: textOf(raw.output) });
    }
  }
  const view: RequestView = { format: 'openai-responses', items, tools, entries };
  if (typeof body.instructions === 'string') view.system = body.instructions;
  return view;
}

/** An Anthropic Messages request: the blocks of its messages and its `system`. */
function readAnthropicRequest(
  body: Record<string, unknown>,
  messages: Record<string, unknown>[],
  tools: unknown[],
): RequestView {
  const entries: ConversationEntry[] = [];
  for (const message of messages) {
    const blocks =
      typeof message.content === 'string'
        ? [{ type: 'text', text: message.content }]
        : (message.content as Record<string, unknown>[]);
    for (const block of blocks ?? []) {
      if (block.type === 'tool_use') {
        entries.push({
          kind: 'tool_call',
          callId: String(block.id),
          name: String(block.name),
          text: JSON.stringify(block.input),
        });
      } else if (block.type === 'tool_result') {
        entries.push({
          kind: 'tool_result',
          callId: String(block.tool_use_id),
          text: textOf(block.content),
        });
      } else if (block.type === 'text') {
        entries.push({ kind: message.role as 'user' | 'assistant', text: String(block.text) });
      }
    }
  }
  const view: RequestView = { format: 'anthropic', items: messages, tools, entries };
  if (body.system !== undefined) view.system = textOf(body.system);
  return view;
}

/** The entries of Chat Completions messages (a tool message is a result; calls follow their text). */
function chatEntries(messages: Record<string, unknown>[]): ConversationEntry[] {
  const entries: ConversationEntry[] = [];
  for (const message of messages) {
    const role = String(message.role);
    if (role === 'tool') {
      entries.push({
        kind: 'tool_result',
        callId: String(message.tool_call_id),
        text: textOf(message.content),
      });
      continue;
    }
    const text = textOf(message.content);
    if (text !== '' || !Array.isArray(message.tool_calls)) entries.push({ kind: roleKind(role), text });
    for (const call of (message.tool_calls ?? []) as Record<string, Record<string, unknown>>[]) {
      entries.push({
        kind: 'tool_call',
        callId: String(call.id),
        name: String(call.function?.name),
        text: String(call.function?.arguments),
      });
    }
  }
  return entries;
}

/**
 * Problems with tool pairing in one request: a result without its earlier call, a call
 * without its result. Empty when every pair is intact.
 */
export function toolPairProblems(view: RequestView): string[] {
  const problems: string[] = [];
  const calls = new Set<string>();
  const answered = new Set<string>();
  for (const entry of view.entries) {
    if (entry.kind === 'tool_call') calls.add(entry.callId!);
    if (entry.kind === 'tool_result') {
      if (!calls.has(entry.callId!)) problems.push(`result ${entry.callId} without its call`);
      answered.add(entry.callId!);
    }
  }
  for (const call of calls) if (!answered.has(call)) problems.push(`call ${call} without its result`);
  return problems;
}

/** Tokens of a recorded request as the manager counts them (system, tools and messages). */
export function requestTokens(manager: CompactManager, view: RequestView): number {
  return manager.estimate(view.items, {
    format: view.format,
    tools: view.tools,
    ...(view.system === undefined ? {} : { system: view.system }),
  }).total;
}

/** True when the request is a summarization call of an LLM summarizer, not an agent call. */
export function isSummarizationRequest(view: RequestView): boolean {
  const system = view.system ?? view.entries.find((entry) => entry.kind === 'system')?.text ?? '';
  return /compact the (history|older part)/i.test(system);
}

/** Options of {@link toolLoopHandler}. */
export interface ToolLoopHandlerOptions {
  /** The tool the scripted model calls. */
  tool: string;
  /** Tool calls per user message before the model answers. @default 1 */
  callsPerTurn?: number;
  /** Arguments of the n-th call (0-based, over the whole server life) for a user message. */
  argumentsFor?: (n: number, userText: string) => Record<string, unknown>;
  /** The final answer of a turn. @default `Done: <first 60 characters of the last tool result>` */
  answerFor?: (lastToolResult: string, userText: string) => string;
  /** The reply to a summarization request. @default a short task-state summary */
  summaryFor?: (view: RequestView) => string;
}

/**
 * A provider test server handler that behaves like a tool-using model: on a new user message
 * it calls `tool` (`callsPerTurn` times in sequence, counted per user message text, since the
 * visible history may be compacted), then answers from the last result.
 * Summarization requests (from an LLM summarizer pointed at the same server) get a summary.
 * Works for Chat Completions, Responses and Anthropic Messages.
 */
export function toolLoopHandler(options: ToolLoopHandlerOptions): ProviderHandler {
  const { tool, callsPerTurn = 1 } = options;
  let calls = 0;
  // Calls made per user message: the visible history may be compacted, so count here.
  const made = new Map<string, number>();
  let lastTurn = '';
  return (request) => {
    if (request.endpoint === 'other') return undefined;
    const view = readRequest(request);
    if (isSummarizationRequest(view)) {
      return { text: options.summaryFor?.(view) ?? 'Goals: continue the task.\nDecisions: none new.' };
    }
    const lastUser = view.entries.findLastIndex(
      (entry) => entry.kind === 'user' && !entry.text.includes('<COMPACT-SUMMARY'),
    );
    // The turn's user message may have been folded into the summary: it is then the last turn seen.
    const userText = view.entries[lastUser]?.text ?? lastTurn;
    lastTurn = userText;
    const results = view.entries.slice(lastUser + 1).filter((entry) => entry.kind === 'tool_result');
    const done = made.get(userText) ?? 0;
    if (done < callsPerTurn) {
      made.set(userText, done + 1);
      const n = calls++;
      const reply: ScriptedReply = {
        toolCalls: [
          { id: `call_${n + 1}`, name: tool, arguments: options.argumentsFor?.(n, userText) ?? { n } },
        ],
      };
      return reply;
    }
    const last =
      results.at(-1)?.text ?? view.entries.findLast((entry) => entry.kind === 'tool_result')?.text ?? '';
    return { text: options.answerFor?.(last, userText) ?? `Done: ${last.slice(0, 60)}` };
  };
}
