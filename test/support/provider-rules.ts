/**
 * What each provider's API itself refuses, read from the raw request body the loopback server
 * received (review 84d). Written apart from the library's codecs (`checkSoundRequest` parses with
 * them, so a shape they accept but the provider refuses passes it), from the providers' documented
 * rules and the errors they return:
 * - OpenAI Chat: the `tool` messages answering an assistant's `tool_calls` come right after it,
 *   one per id, before any other message ("messages with role 'tool' must be a response to a
 *   preceding message with 'tool_calls'"; "An assistant message with 'tool_calls' must be followed
 *   by tool messages responding to each 'tool_call_id'"); content parts per role (images only from
 *   the user; system, developer and tool take text; the assistant text or refusal); no empty
 *   content array; an assistant with no calls has content.
 * - OpenAI Responses: each `function_call_output` after a `function_call` with its `call_id`, each
 *   call answered ("No tool output found for function call"); item ids unique ("Duplicate item
 *   found with id"); a `reasoning` item followed by the item it produced ("provided without its
 *   required following item"); a call or message that came after a reasoning item in the given
 *   history and keeps its id goes with that reasoning ("provided without its required 'reasoning'
 *   item").
 * - Anthropic Messages (consecutive turns of one role merged, as the API does): the first turn the
 *   user's; no empty content nor empty text block; tool_use ids unique; each tool_use answered in
 *   the very next user turn, whose tool_result blocks come first and each answer a tool_use of the
 *   turn before; images from the user only (or inside a tool_result); thinking blocks on assistant
 *   turns only, each as given (text and signature); with thinking on, the assistant turn the tool
 *   loop continues from opens with its thinking.
 */

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

const partsOf = (content: unknown): Json[] => (Array.isArray(content) ? content.filter(isObject) : []);

/** Which part types a Chat role may send. */
const CHAT_PARTS: Record<string, readonly string[]> = {
  system: ['text'],
  developer: ['text'],
  user: ['text', 'image_url', 'input_audio', 'file'],
  assistant: ['text', 'refusal'],
  tool: ['text'],
};

/** Problems the OpenAI Chat Completions API refuses in `body`. */
export function chatProblems(body: unknown): string[] {
  const messages = isObject(body) && Array.isArray(body.messages) ? body.messages.filter(isObject) : [];
  if (messages.length === 0) return ['no messages'];
  const problems: string[] = [];
  let open: string[] | undefined;
  messages.forEach((message, at) => {
    const role = String(message.role);
    const allowed = CHAT_PARTS[role];
    if (!allowed) {
      problems.push(`message ${at}: role ${role}`);
      return;
    }
    const { content } = message;
    if (Array.isArray(content)) {
      if (content.length === 0) problems.push(`message ${at} (${role}): empty content array`);
      for (const part of partsOf(content))
        if (!allowed.includes(String(part.type)))
          problems.push(`message ${at} (${role}): a ${String(part.type)} part`);
    } else if (typeof content !== 'string' && !(role === 'assistant' && content == null))
      problems.push(`message ${at} (${role}): content ${JSON.stringify(content)}`);
    const calls = role === 'assistant' && Array.isArray(message.tool_calls) ? message.tool_calls : undefined;
    if (role === 'assistant' && content == null && !calls?.length)
      problems.push(`message ${at}: an assistant message without content or tool calls`);
    if (role === 'tool') {
      const id = String(message.tool_call_id);
      const k = open?.indexOf(id) ?? -1;
      if (k < 0) problems.push(`message ${at}: tool result ${id} answers no call of the assistant before it`);
      else open!.splice(k, 1);
      return;
    }
    if (open?.length) problems.push(`message ${at}: calls ${open.join(', ')} left unanswered before it`);
    open = undefined;
    if (calls) {
      if (calls.length === 0) problems.push(`message ${at}: empty tool_calls`);
      open = calls.filter(isObject).map((call) => String(call.id));
    }
  });
  if (open?.length) problems.push(`calls ${open.join(', ')} left unanswered at the end`);
  return problems;
}

const RESPONSES_PARTS: Record<string, readonly string[]> = {
  system: ['input_text'],
  developer: ['input_text'],
  user: ['input_text', 'input_image', 'input_file', 'input_audio'],
  assistant: ['output_text', 'refusal'],
};

/** The item's type (a bare `{role, content}` is a message; a stored reasoning item sent by reference is reasoning). */
const itemType = (item: Json): string =>
  item.type === 'item_reference' && String(item.id).startsWith('rs_')
    ? 'reasoning'
    : typeof item.type === 'string'
      ? item.type
      : 'message';

/**
 * Problems the OpenAI Responses API refuses in `body`. `given`: the history in Responses items,
 * for the rule that a kept item id keeps its reasoning.
 */
export function responsesProblems(body: unknown, given?: readonly unknown[]): string[] {
  const input = isObject(body) && Array.isArray(body.input) ? body.input.filter(isObject) : [];
  const chained = isObject(body) && (body.previous_response_id != null || body.conversation != null);
  const problems: string[] = [];
  const ids = new Set<string>();
  const calls = new Map<string, number>();
  const answered = new Set<string>();
  input.forEach((item, at) => {
    const type = itemType(item);
    if (typeof item.id === 'string') {
      if (ids.has(item.id)) problems.push(`item ${at}: duplicate id ${item.id}`);
      ids.add(item.id);
    }
    if (type === 'message') {
      const role = String(item.role);
      const allowed = RESPONSES_PARTS[role];
      if (!allowed) problems.push(`item ${at}: role ${role}`);
      else if (Array.isArray(item.content)) {
        if (item.content.length === 0) problems.push(`item ${at} (${role}): empty content`);
        for (const part of partsOf(item.content))
          if (!allowed.includes(String(part.type)))
            problems.push(`item ${at} (${role}): a ${String(part.type)} part`);
      } else if (typeof item.content !== 'string') problems.push(`item ${at} (${role}): no content`);
    }
    if (type === 'function_call') calls.set(String(item.call_id), at);
    if (type === 'function_call_output') {
      const id = String(item.call_id);
      if (!calls.has(id) && !chained) problems.push(`item ${at}: output of ${id} with no call before it`);
      answered.add(id);
    }
    if (type === 'reasoning') {
      const next = input[at + 1];
      if (!next || itemType(next) === 'reasoning' || !producedByReasoning(next))
        problems.push(`item ${at}: reasoning ${String(item.id)} without the item it produced after it`);
    }
  });
  for (const [id, at] of calls)
    if (!answered.has(id)) problems.push(`item ${at}: call ${id} with no output in the request`);
  problems.push(...reasoningKept(input, given));
  return problems;
}

/** What a reasoning item may precede: an item the model produced (a call of any tool, its message). */
const producedByReasoning = (item: Json): boolean => {
  const type = itemType(item);
  if (type === 'message') return item.role === 'assistant';
  return type !== 'reasoning' && !/_(output|result)$/.test(type) && type !== 'item_reference';
};

/** An item sent with the id it had right after a reasoning item of the given history is sent with that reasoning. */
function reasoningKept(input: readonly Json[], given: readonly unknown[] | undefined): string[] {
  if (!given) return [];
  const needs = new Map<string, string>();
  const history = given.filter(isObject);
  history.forEach((item, at) => {
    const before = history[at - 1];
    if (typeof item.id === 'string' && before && itemType(before) === 'reasoning')
      needs.set(item.id, String(before.id));
  });
  const sent = new Set(input.map((item) => item.id).filter((id) => typeof id === 'string'));
  return input.flatMap((item, at) => {
    const reasoning = typeof item.id === 'string' ? needs.get(item.id) : undefined;
    return reasoning !== undefined && !sent.has(reasoning)
      ? [`item ${at}: ${String(item.id)} sent without its reasoning item ${reasoning}`]
      : [];
  });
}

/** An Anthropic turn: one role, its blocks (consecutive messages of one role merged). */
interface Turn {
  role: string;
  blocks: Json[];
  first: number;
}

function turnsOf(messages: readonly Json[], problems: string[]): Turn[] {
  const turns: Turn[] = [];
  messages.forEach((message, at) => {
    const role = String(message.role);
    if (role !== 'user' && role !== 'assistant') problems.push(`message ${at}: role ${role}`);
    const { content } = message;
    const last = at === messages.length - 1 && role === 'assistant';
    let blocks: Json[];
    if (typeof content === 'string') {
      if (content.trim() === '' && !last) problems.push(`message ${at} (${role}): empty text`);
      blocks = [{ type: 'text', text: content }];
    } else {
      blocks = partsOf(content);
      if (blocks.length === 0 && !last) problems.push(`message ${at} (${role}): empty content`);
    }
    for (const block of blocks)
      if (block.type === 'text' && String(block.text ?? '').trim() === '')
        problems.push(`message ${at} (${role}): an empty text block`);
    const previous = turns.at(-1);
    if (previous?.role === role) previous.blocks.push(...blocks);
    else turns.push({ role, blocks, first: at });
  });
  return turns;
}

/** Thinking and redacted thinking, as the API compares them (signature included). */
const thinkingKey = (block: Json): string | undefined =>
  block.type === 'thinking'
    ? `t:${String(block.thinking)}:${String(block.signature)}`
    : block.type === 'redacted_thinking'
      ? `r:${String(block.data)}`
      : undefined;

/** A block Anthropic's servers wrote (server or MCP tool call, its result): sent back as it came. */
const isServerBlock = (block: Json): boolean =>
  block.type !== 'tool_use' &&
  block.type !== 'tool_result' &&
  (/tool_use$/.test(String(block.type)) || block.tool_use_id !== undefined);

/** What must go back exactly as given: thinking (its signature), server tool blocks (their encrypted content). */
const sealedKey = (block: Json): string | undefined =>
  thinkingKey(block) ?? (isServerBlock(block) ? `s:${JSON.stringify(block)}` : undefined);

/**
 * Problems the Anthropic Messages API refuses in `body`. `given`: the history in Anthropic
 * messages, for the rule that thinking goes as given.
 */
export function anthropicProblems(body: unknown, given?: readonly unknown[]): string[] {
  const messages = isObject(body) && Array.isArray(body.messages) ? body.messages.filter(isObject) : [];
  if (messages.length === 0) return ['no messages'];
  const problems: string[] = [];
  const turns = turnsOf(messages, problems);
  if (turns[0]?.role !== 'user') problems.push(`the first turn is the ${turns[0]?.role}'s`);
  const useIds = new Set<string>();
  turns.forEach((turn, k) => {
    const where = `turn ${k} (message ${turn.first}, ${turn.role})`;
    const uses = turn.blocks.filter((block) => block.type === 'tool_use').map((block) => String(block.id));
    for (const id of uses) {
      if (useIds.has(id)) problems.push(`${where}: tool_use id ${id} repeated`);
      useIds.add(id);
    }
    for (const block of turn.blocks) {
      if (turn.role !== 'user' && (block.type === 'image' || block.type === 'tool_result'))
        problems.push(`${where}: a ${block.type} block`);
      if (turn.role !== 'assistant' && (thinkingKey(block) || block.type === 'tool_use'))
        problems.push(`${where}: a ${block.type} block`);
    }
    if (turn.role !== 'user') return;
    const before = turns[k - 1];
    const asked =
      before?.blocks.filter((block) => block.type === 'tool_use').map((block) => String(block.id)) ?? [];
    const results = turn.blocks.filter((block) => block.type === 'tool_result');
    const lead = turn.blocks.findIndex((block) => block.type !== 'tool_result');
    if (lead >= 0 && lead < results.length)
      problems.push(`${where}: a ${turn.blocks[lead]!.type} before its tool_result blocks`);
    for (const result of results)
      if (!asked.includes(String(result.tool_use_id)))
        problems.push(
          `${where}: tool_result ${String(result.tool_use_id)} answers no tool_use of the turn before`,
        );
    const missing = asked.filter((id) => !results.some((result) => result.tool_use_id === id));
    if (missing.length > 0) problems.push(`${where}: tool_use ${missing.join(', ')} not answered in it`);
  });
  problems.push(...cacheProblems(body as Json, turns));
  const last = turns.at(-1);
  if (last?.role === 'assistant' && last.blocks.some((block) => block.type === 'tool_use'))
    problems.push('the last turn asks for tools that are not answered');
  problems.push(...thinkingProblems(body as Json, turns, given));
  return problems;
}

/** At most 4 `cache_control` marks (tools, system, blocks, blocks inside tool results); none on thinking nor empty text. */
function cacheProblems(body: Json, turns: readonly Turn[]): string[] {
  const problems: string[] = [];
  const marked = (value: unknown) => isObject(value) && value.cache_control != null;
  let count = partsOf(body.tools).filter(marked).length + partsOf(body.system).filter(marked).length;
  turns.forEach((turn, k) => {
    for (const block of turn.blocks) {
      if (marked(block)) count++;
      if (block.type === 'tool_result') count += partsOf(block.content).filter(marked).length;
      if (marked(block) && (thinkingKey(block) || (block.type === 'text' && String(block.text) === '')))
        problems.push(`turn ${k}: cache_control on a ${block.type} block`);
    }
  });
  if (count > 4) problems.push(`${count} cache_control marks (at most 4)`);
  return problems;
}

function thinkingProblems(
  body: Json,
  turns: readonly Turn[],
  given: readonly unknown[] | undefined,
): string[] {
  const problems: string[] = [];
  const thinking = isObject(body.thinking) && body.thinking.type !== 'disabled';
  const last = turns.at(-1);
  const from = turns.at(-2);
  if (
    thinking &&
    last?.role === 'user' &&
    last.blocks[0]?.type === 'tool_result' &&
    from?.role === 'assistant'
  )
    if (!thinkingKey(from.blocks[0] ?? {}))
      problems.push(
        `turn ${turns.length - 2}: the turn the tool loop continues from opens with ${String(from.blocks[0]?.type)}, not its thinking`,
      );
  if (!given) return problems;
  const held = new Set(
    given.filter(isObject).flatMap((message) => partsOf(message.content).map(sealedKey).filter(Boolean)),
  );
  turns.forEach((turn, k) => {
    for (const block of turn.blocks) {
      const key = sealedKey(block);
      if (key && !held.has(key)) problems.push(`turn ${k}: a ${block.type} block not as given`);
    }
    // A server tool call is answered in its own turn (unless the turn paused on it: the last one).
    const answered = new Set(turn.blocks.filter(isServerBlock).map((block) => String(block.tool_use_id)));
    if (k < turns.length - 1)
      for (const block of turn.blocks)
        if (
          /tool_use$/.test(String(block.type)) &&
          block.type !== 'tool_use' &&
          !answered.has(String(block.id))
        )
          problems.push(`turn ${k}: ${block.type} ${String(block.id)} without its result in the turn`);
  });
  return problems;
}

/** The problems of a recorded request, by its endpoint. */
export function providerProblems(endpoint: string, body: unknown, given?: readonly unknown[]): string[] {
  if (endpoint === 'openai-chat') return chatProblems(body);
  if (endpoint === 'openai-responses') return responsesProblems(body, given);
  if (endpoint === 'anthropic-messages') return anthropicProblems(body, given);
  return [];
}
