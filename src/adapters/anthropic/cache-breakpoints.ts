/**
 * Anthropic prompt-cache breakpoints placed by the integration. Anthropic caches a request's
 * prefix (tools, then system, then messages) up to each `cache_control` mark; without marks
 * nothing is cached. After compaction the request is: tools and system, the pinned messages
 * and the summary, then the recent messages. Marks go where a later request shares the prefix:
 * after the tools and system prompt, after the summary (a compaction rewrites what follows it,
 * not what precedes it), and on the newest message (the next call extends it). Never more
 * than the API's 4; marks the caller set are kept and counted.
 */
import { findLibraryTags } from '../../core/summary/summary-markup.js';
import { runSteps, runStepsYielding, type Steps, type TimeSlice } from '../../core/time-slice.js';

/** Where the integration places cache breakpoints. */
export type CacheBreakpointsOption = 'auto' | boolean;

const MAX_BREAKPOINTS = 4;
/** Messages read between two chances to give the loop a turn (a 16k-message request is ~10 ms of passes). */
const MESSAGES_PER_STEP = 512;
const EPHEMERAL = Object.freeze({ type: 'ephemeral' });

type Block = Record<string, unknown>;
type Message = { role?: unknown; content?: unknown; [key: string]: unknown };

const marked = (value: unknown) =>
  value !== null && typeof value === 'object' && (value as Block).cache_control !== undefined;

/** Marks among a message's content blocks, with those inside a `tool_result`'s own blocks. */
function contentMarks(content: readonly unknown[]): number {
  let count = 0;
  for (const block of content) {
    if (marked(block)) count++;
    const inner = (block as Block | null)?.content;
    if ((block as Block | null)?.type === 'tool_result' && Array.isArray(inner))
      count += inner.filter(marked).length;
  }
  return count;
}

/** The caller's own `cache_control` marks in a request body (the API counts those in tool results too). */
export function countBreakpoints(body: Record<string, unknown>): number {
  return runSteps(countBreakpointsSteps(body));
}

function* countBreakpointsSteps(body: Record<string, unknown>): Steps<number> {
  let count = 0;
  if (Array.isArray(body.tools)) count += body.tools.filter(marked).length;
  if (Array.isArray(body.system)) count += body.system.filter(marked).length;
  const messages = (body.messages as Message[] | undefined) ?? [];
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index];
    if (Array.isArray(message?.content)) count += contentMarks(message.content);
    if (index % MESSAGES_PER_STEP === MESSAGES_PER_STEP - 1) yield;
  }
  return count;
}

/**
 * Whether Anthropic takes a `cache_control` mark on a block: never on a thinking block (the API
 * refuses one there) nor on an empty text block (likewise).
 */
function markable(block: unknown): boolean {
  if (block === null || typeof block !== 'object') return false;
  const { type, text } = block as Block;
  if (type === 'thinking' || type === 'redacted_thinking') return false;
  return !(type === 'text' && (typeof text !== 'string' || text.length === 0));
}

/**
 * A copy of `message` with its last markable content block marked (string content becomes one
 * text block), or undefined when it has none (an assistant turn of thinking only, empty text).
 */
function markMessage(message: Message): Message | undefined {
  const content =
    typeof message.content === 'string'
      ? [{ type: 'text', text: message.content }]
      : Array.isArray(message.content)
        ? [...(message.content as Block[])]
        : undefined;
  if (!content) return undefined;
  let last = content.length - 1;
  while (last >= 0 && !markable(content[last])) last--;
  if (last < 0) return undefined;
  content[last] = { ...content[last], cache_control: EPHEMERAL };
  return { ...message, content };
}

function isSummary(message: Message): boolean {
  const text =
    typeof message.content === 'string'
      ? message.content
      : Array.isArray(message.content)
        ? String((message.content[0] as Block | undefined)?.text ?? '')
        : '';
  return text.startsWith('<COMPACT-SUMMARY v') && findLibraryTags(text).length > 0;
}

/** The index of the manager's summary message in `messages`, or -1. */
function* findSummarySteps(messages: readonly Message[]): Steps<number> {
  for (let index = 0; index < messages.length; index++) {
    if (isSummary(messages[index]!)) return index;
    if (index % MESSAGES_PER_STEP === MESSAGES_PER_STEP - 1) yield;
  }
  return -1;
}

/**
 * `body` with breakpoints placed: with `'auto'` only when the caller set none, with `true`
 * beside the caller's up to 4 in all. Never changes the caller's objects.
 */
export function placeBreakpoints(
  body: Record<string, unknown>,
  option: CacheBreakpointsOption = 'auto',
): Record<string, unknown> {
  return runSteps(placeBreakpointsSteps(body, option));
}

/**
 * {@link placeBreakpoints} giving the event loop a turn whenever `slice` has run its time (its
 * passes over a long request's messages): the same body.
 */
export function placeBreakpointsInSlices(
  body: Record<string, unknown>,
  option: CacheBreakpointsOption = 'auto',
  slice?: TimeSlice,
): Promise<Record<string, unknown>> {
  return runStepsYielding(placeBreakpointsSteps(body, option), slice);
}

function* placeBreakpointsSteps(
  body: Record<string, unknown>,
  option: CacheBreakpointsOption,
): Steps<Record<string, unknown>> {
  if (option === false) return body;
  const existing = yield* countBreakpointsSteps(body);
  if (option === 'auto' && existing > 0) return body;
  let room = MAX_BREAKPOINTS - existing;
  const out = { ...body };
  const messages = [...((body.messages as Message[] | undefined) ?? [])];
  // 1. After the tools and the system prompt (the last system block, else the last tool).
  if (room > 0 && typeof out.system === 'string' && out.system !== '') {
    out.system = [{ type: 'text', text: out.system, cache_control: EPHEMERAL }];
    room--;
  } else if (room > 0 && Array.isArray(out.system) && out.system.length > 0 && !out.system.some(marked)) {
    const system = [...(out.system as Block[])];
    system[system.length - 1] = { ...system[system.length - 1], cache_control: EPHEMERAL };
    out.system = system;
    room--;
  } else if (room > 0 && out.system === undefined && Array.isArray(out.tools) && out.tools.length > 0) {
    const tools = [...(out.tools as Block[])];
    if (!tools.some(marked)) {
      tools[tools.length - 1] = { ...tools[tools.length - 1], cache_control: EPHEMERAL };
      out.tools = tools;
      room--;
    }
  }
  // 2. After the summary, when it is not the newest message.
  const summary = room > 0 ? yield* findSummarySteps(messages) : -1;
  const markedSummary =
    room > 0 && summary >= 0 && summary < messages.length - 1 && markMessage(messages[summary]!);
  if (markedSummary) {
    messages[summary] = markedSummary;
    room--;
  }
  // 3. The newest message: the next call reads everything up to it from the cache.
  const last = messages.length - 1;
  const markedLast =
    room > 0 &&
    last >= 0 &&
    !(Array.isArray(messages[last]!.content) && (messages[last]!.content as Block[]).some(marked)) &&
    markMessage(messages[last]!);
  if (markedLast) {
    messages[last] = markedLast;
    room--;
  }
  out.messages = messages;
  return out;
}
