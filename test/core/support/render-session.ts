/**
 * Renders the abstract steps of {@link sessionArbitrary} into one wire format. Every message's
 * text is unique (tagged with an id taken in order), so a checker can find each output message
 * in the history.
 */
import { type SessionStep, type WireFormat, wordsOf } from './session-model.js';

/** A rendered session: the messages (each a group of one step), plus a separate system prompt. */
export interface RenderedSession {
  format: WireFormat;
  messages: Record<string, unknown>[];
  /** Index of the first message of each step, and one past the end. */
  stepStarts: number[];
  /** Anthropic: the system prompt built from `pinned-role` steps. */
  system?: string;
  tools: unknown[];
}

type Message = Record<string, unknown>;
type ToolsStep = Extract<SessionStep, { kind: 'tools' }>;

/** What a step renderer writes to, and the id counter every text is tagged from. */
interface Out {
  format: WireFormat;
  messages: Message[];
  systemParts: string[];
  next: () => number;
  toolCount: number;
}

const protectedMeta = (uid: number) => ({ protected: true, label: `Protected ${uid}` });

/** Renders abstract steps into one wire format. Every message's text is unique. */
export function renderSession(
  format: WireFormat,
  steps: readonly SessionStep[],
  toolCount = 2,
): RenderedSession {
  let uid = 0;
  const out: Out = { format, messages: [], systemParts: [], next: () => ++uid, toolCount };
  const stepStarts: number[] = [];
  for (const step of steps) {
    stepStarts.push(out.messages.length);
    if (step.kind === 'pinned-role') renderPinnedRole(out, step);
    else if (step.kind === 'user') renderUser(out, step);
    else if (step.kind === 'assistant') renderAssistant(out, step);
    else if (step.kind === 'tools') renderTools(out, step);
    else renderUnknown(out, step);
  }
  stepStarts.push(out.messages.length);
  const tools = toolSchemas(format, toolCount);
  const rendered: RenderedSession = { format, messages: out.messages, stepStarts, tools };
  if (out.systemParts.length > 0) rendered.system = out.systemParts.join('\n');
  return rendered;
}

function renderPinnedRole(out: Out, step: Extract<SessionStep, { kind: 'pinned-role' }>): void {
  const text = wordsOf(out.next(), step.words);
  if (out.format === 'anthropic') out.systemParts.push(text);
  else if (out.format === 'openai-chat') out.messages.push({ role: step.role, content: text });
  else out.messages.push({ type: 'message', role: step.role, content: text });
}

function renderUser(out: Out, step: Extract<SessionStep, { kind: 'user' }>): void {
  const id = out.next();
  // Some user messages repeat word for word ("continue"), as in real agent sessions (never
  // protected ones: the checker could not tell equal pinned and unpinned copies apart).
  const text = step.repeat && !step.protected ? 'continue' : wordsOf(id, step.words);
  const meta = step.protected ? { meta: protectedMeta(id) } : {};
  if (out.format === 'openai-responses') {
    out.messages.push(
      step.parts
        ? { type: 'message', role: 'user', content: [{ type: 'input_text', text }], ...meta }
        : { role: 'user', content: text, ...meta },
    );
  } else out.messages.push({ role: 'user', content: step.parts ? [{ type: 'text', text }] : text, ...meta });
}

function renderAssistant(out: Out, step: Extract<SessionStep, { kind: 'assistant' }>): void {
  const id = out.next();
  const text = wordsOf(id, step.words);
  const meta = step.protected ? { meta: protectedMeta(id) } : {};
  if (out.format === 'openai-chat') {
    out.messages.push({ role: 'assistant', content: text, ...meta });
    return;
  }
  if (out.format === 'openai-responses') {
    if (step.reasoning) out.messages.push(responsesReasoning(id, wordsOf(out.next(), 12)));
    out.messages.push({
      type: 'message',
      id: `msg_${id}`,
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text, annotations: [] }],
      ...meta,
    });
    return;
  }
  const blocks: unknown[] = [];
  if (step.reasoning)
    blocks.push({ type: 'thinking', thinking: wordsOf(out.next(), 12), signature: `sig${id}` });
  blocks.push({ type: 'text', text });
  out.messages.push({ role: 'assistant', content: blocks, ...meta });
}

const responsesReasoning = (id: number, text: string): Message => ({
  type: 'reasoning',
  id: `rs_${id}`,
  summary: [{ type: 'summary_text', text }],
  encrypted_content: `enc${id}`,
});

/** One tool round's calls and outputs, format-independent. */
interface Round {
  id: number;
  calls: { id: string; name: string; args: { path: string; query: string } }[];
  outputs: string[];
  callMeta: Message;
  resultMeta: (k: number) => Message;
}

function renderTools(out: Out, step: ToolsStep): void {
  const id = out.next();
  const calls = step.results.map((_, k) => ({
    id: out.format === 'anthropic' ? `toolu_${id}_${k}` : `call_${id}_${k}`,
    name: `tool_${k % out.toolCount}`,
    args: { path: `src/module_${id}_${k}.ts`, query: wordsOf(id, 3) },
  }));
  const round: Round = {
    id,
    calls,
    outputs: step.results.map((words, k) => `result of ${calls[k]!.id}: ${wordsOf(out.next(), words)}`),
    callMeta: step.protectedAt === 0 ? { meta: protectedMeta(id) } : {},
    resultMeta: (k) => (step.protectedAt === k + 1 ? { meta: protectedMeta(id) } : {}),
  };
  if (out.format === 'openai-chat') chatTools(out, step, round);
  else if (out.format === 'openai-responses') responsesTools(out, step, round);
  else anthropicTools(out, step, round);
}

function chatTools(out: Out, step: ToolsStep, round: Round): void {
  out.messages.push({
    role: 'assistant',
    content: step.text > 0 ? wordsOf(out.next(), step.text) : null,
    tool_calls: round.calls.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.name, arguments: JSON.stringify(c.args) },
    })),
    ...round.callMeta,
  });
  round.calls.forEach((c, k) => {
    out.messages.push({
      role: 'tool',
      tool_call_id: c.id,
      content: round.outputs[k]!,
      ...round.resultMeta(k),
    });
  });
}

function responsesTools(out: Out, step: ToolsStep, round: Round): void {
  const { id, calls } = round;
  if (step.unknownItem) {
    const u = out.next();
    out.messages.push({
      type: 'web_search_call',
      id: `ws_${u}`,
      status: 'completed',
      action: { type: 'search', query: wordsOf(u, 4) },
    });
  }
  if (step.text > 0) {
    const t = out.next();
    out.messages.push({
      type: 'message',
      id: `msg_${t}`,
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: wordsOf(t, step.text), annotations: [] }],
    });
  }
  if (step.reasoning) out.messages.push(responsesReasoning(id, wordsOf(out.next(), 10)));
  calls.forEach((c, k) => {
    out.messages.push({
      type: 'function_call',
      id: `fc_${id}_${k}`,
      call_id: c.id,
      name: c.name,
      arguments: JSON.stringify(c.args),
      status: 'completed',
      ...(k === 0 ? round.callMeta : {}),
    });
  });
  calls.forEach((c, k) => {
    out.messages.push({
      type: 'function_call_output',
      call_id: c.id,
      output: round.outputs[k]!,
      ...round.resultMeta(k),
    });
  });
}

function anthropicTools(out: Out, step: ToolsStep, round: Round): void {
  const { id, calls, outputs } = round;
  const blocks: unknown[] = [];
  if (step.reasoning)
    blocks.push({ type: 'thinking', thinking: wordsOf(out.next(), 10), signature: `sig${id}` });
  if (step.text > 0) blocks.push({ type: 'text', text: wordsOf(out.next(), step.text) });
  for (const c of calls) blocks.push({ type: 'tool_use', id: c.id, name: c.name, input: c.args });
  out.messages.push({ role: 'assistant', content: blocks, ...round.callMeta });
  if (step.resultsInOneMessage) {
    const protectedResult = step.protectedAt > 0 ? { meta: protectedMeta(id) } : {};
    const content: unknown[] = calls.map((c, k) => ({
      type: 'tool_result',
      tool_use_id: c.id,
      content: outputs[k]!,
      ...(k === 1 ? { is_error: true } : {}),
    }));
    if (step.unknownItem) content.push({ type: 'text', text: wordsOf(out.next(), 5) });
    out.messages.push({ role: 'user', content, ...protectedResult });
    return;
  }
  calls.forEach((c, k) => {
    out.messages.push({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: c.id, content: [{ type: 'text', text: outputs[k]! }] }],
      ...round.resultMeta(k),
    });
  });
}

function renderUnknown(out: Out, step: Extract<SessionStep, { kind: 'unknown' }>): void {
  const u = out.next();
  if (out.format === 'openai-chat')
    out.messages.push({ role: 'assistant', content: [{ type: 'text', text: wordsOf(u, step.words) }] });
  else if (out.format === 'openai-responses')
    out.messages.push({ type: 'x_custom_item', id: `x_${u}`, data: { note: wordsOf(u, step.words) } });
  else {
    out.messages.push({
      role: 'user',
      content: [
        { type: 'text', text: wordsOf(u, step.words) },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: `iVBORw0KGgo${u}` } },
      ],
    });
  }
}

function toolSchemas(format: WireFormat, count: number): unknown[] {
  const out: unknown[] = [];
  for (let k = 0; k < count; k++) {
    const parameters = {
      type: 'object',
      properties: { path: { type: 'string', description: 'file path' }, query: { type: 'string' } },
      required: ['path'],
    };
    const description = `Tool number ${k}: reads or searches the repository.`;
    if (format === 'openai-chat')
      out.push({ type: 'function', function: { name: `tool_${k}`, description, parameters } });
    else if (format === 'openai-responses')
      out.push({ type: 'function', name: `tool_${k}`, description, parameters });
    else out.push({ name: `tool_${k}`, description, input_schema: parameters });
  }
  return out;
}
