/**
 * One invariant for every request an integration sends (issue 43), written apart from the
 * engine's own checks so that it can judge them: run it on the requests your provider test
 * server records, or on your own traffic.
 *
 * A request is sound when
 * 1. every tool call has its result in the order the provider requires (Chat: the `tool`
 *    messages right after the assistant's `tool_calls`; Responses: each `function_call_output`
 *    after its `function_call`; Anthropic: the `tool_result` blocks in the very next user turn),
 *    and no result comes without its call;
 * 2. the newest message of the given history is sent exactly as given, last;
 * 3. it carries at most one trusted summary (`<COMPACT-SUMMARY vN>` whose mark verifies);
 * 4. it says nothing the given history lacks, apart from that summary and the placeholders
 *    that stand for content the history holds (a cleared result, text cut head and tail);
 * 5. it fits the window by the provider's count.
 */
import { CompactManager } from '../core/manager/compact-manager.js';
import { SummaryMarks } from '../core/summary/summary-mark.js';
import { describeAtoms, holds, piecesOf, sameAtoms } from './atom-holds.js';
import {
  type Atom,
  atomsOf,
  formatOfMessages,
  type ReadMessage,
  type ReadRequest,
  readMessages,
  readRequestBody,
  type SoundRequestFormat,
} from './request-atoms.js';

export type { SoundRequestFormat } from './request-atoms.js';

/** Which part of the invariant a violation breaks. */
export type SoundRequestRule =
  | 'unreadable'
  | 'tool_pairing'
  | 'newest_message'
  | 'summary'
  | 'foreign_content'
  | 'over_window';

/** One way a request breaks the invariant. */
export interface SoundRequestViolation {
  rule: SoundRequestRule;
  /** What broke, naming the message. */
  message: string;
  /** Index of the request message concerned, when one is. */
  index?: number;
}

/** What {@link checkSoundRequest} judges. */
export interface SoundRequestInput {
  /**
   * The request as sent: a provider body (`{messages, tools?}` for Chat, `{input,
   * instructions?, tools?}` for Responses, `{messages, system?, tools?}` for Anthropic) or its
   * message list alone.
   */
  request: unknown;
  /** The request's wire format. @default detected from the body */
  format?: SoundRequestFormat;
  /**
   * The history the integration was given for this call (any of the formats, not necessarily
   * the request's). Without it, rules 2 and 4 are not checked.
   */
  given?: readonly unknown[];
  /** The format of `given`. @default detected */
  givenFormat?: SoundRequestFormat;
  /**
   * The session the summary belongs to: with it, a summary counts as trusted only when its mark
   * verifies under `summaryKeys`. Without it, any `<COMPACT-SUMMARY vN>` message the given
   * history lacks counts as the summary.
   */
  sessionId?: string;
  /** The manager's `summaryKeys`. @default the manager's default (environment, then key file) */
  summaryKeys?: string | readonly string[];
  /**
   * The window: the request's tokens and the reply its body asks for (`max_tokens`,
   * `max_completion_tokens`, `max_output_tokens`) must fit in it, as providers demand. Without
   * it, rule 5 is not checked.
   */
  maxContextTokens?: number;
  /**
   * The most the request may take: the window less the room kept for the answer (the
   * manager's `budget`, `maxContextTokens - hardCapBuffer`, or less when the body asks for a
   * larger reply). A newest message too large to fit whole in it may be sent cut around the
   * marker; nothing else may change it.
   * @default maxContextTokens
   */
  budgetTokens?: number;
  /** The model, for the library's count. @default `gpt-4o` */
  model?: string;
  /** The provider's count of the request. @default the library's counter for `model` */
  countTokens?: (request: ReadRequest) => number;
}

/** Thrown by {@link assertSoundRequest}: the request and every violation found. */
export class UnsoundRequestError extends Error {
  readonly violations: SoundRequestViolation[];

  constructor(violations: SoundRequestViolation[]) {
    super(
      `unsound request: ${violations.map((violation) => `[${violation.rule}] ${violation.message}`).join('; ')}`,
    );
    this.name = 'UnsoundRequestError';
    this.violations = violations;
  }
}

const SUMMARY_TAG = /<COMPACT-SUMMARY v(\d+)>/;

/** Checks one request; returns every violation (empty when sound). */
export function checkSoundRequest(input: SoundRequestInput): SoundRequestViolation[] {
  let request: ReadRequest;
  let given: ReadMessage[] | undefined;
  try {
    request = readRequestBody(input.request, input.format);
  } catch (error) {
    return [{ rule: 'unreadable', message: `the request cannot be read: ${(error as Error).message}` }];
  }
  try {
    if (input.given) given = readMessages(input.given, formatOfMessages(input.given, input.givenFormat));
  } catch (error) {
    return [{ rule: 'unreadable', message: `the given history cannot be read: ${(error as Error).message}` }];
  }
  const violations = pairingViolations(request);
  const summaries = summaryMessages(request.messages, input);
  if (summaries.size > 1)
    violations.push({
      rule: 'summary',
      message: `${summaries.size} summaries (messages ${[...summaries].join(', ')}); at most one is sound`,
      index: [...summaries][1]!,
    });
  if (given) {
    violations.push(...newestViolations(request, given, input));
    violations.push(...foreignViolations(request, given, summaries));
  }
  violations.push(...windowViolations(request, input));
  return violations;
}

/** {@link checkSoundRequest}, throwing {@link UnsoundRequestError} when the request is not sound. */
export function assertSoundRequest(input: SoundRequestInput): void {
  const violations = checkSoundRequest(input);
  if (violations.length > 0) throw new UnsoundRequestError(violations);
}

function callList(ids: readonly string[]): string {
  return ids.join(', ');
}

/**
 * Tool pairing in the provider's order. Chat (and the CompactMessage form): the results of an
 * assistant's calls are the `tool` messages right after it. Anthropic: they are in the next
 * message. Responses: each output comes after its call. Ids may repeat: a result answers the
 * nearest open call with its id.
 */
function pairingViolations(request: ReadRequest): SoundRequestViolation[] {
  const out: SoundRequestViolation[] = [];
  const { messages, format } = request;
  const anywhere = format === 'openai-responses';
  let open: { id: string; at: number }[] = [];
  const unanswered = (index: number) => {
    if (open.length === 0) return;
    out.push({
      rule: 'tool_pairing',
      message: `call ${callList(open.map((call) => call.id))} of message ${open[0]!.at} without its result before message ${index}`,
      index: open[0]!.at,
    });
    open = [];
  };
  messages.forEach((message, index) => {
    const onlyResults = message.toolResults.length > 0 && message.toolCalls.length === 0;
    // Chat: a message other than a tool result closes the calls; Anthropic: any message after the next.
    if (!anywhere && format !== 'anthropic' && !(onlyResults && message.role === 'tool')) unanswered(index);
    for (const result of message.toolResults) {
      const k = anywhere
        ? open.findLastIndex((call) => call.id === result.callId)
        : open.findIndex((call) => call.id === result.callId);
      if (k >= 0) open.splice(k, 1);
      else
        out.push({
          rule: 'tool_pairing',
          message: `result of ${result.callId} at message ${index} without its call${anywhere ? ' before it' : ' in the message before'}`,
          index,
        });
    }
    if (format === 'anthropic') unanswered(index);
    for (const call of message.toolCalls) open.push({ id: call.id, at: index });
  });
  unanswered(messages.length);
  return out;
}

const verifiers = new Map<string, SummaryMarks>();

function marksFor(keys: SoundRequestInput['summaryKeys']): SummaryMarks {
  const name = keys === undefined ? '' : JSON.stringify(keys);
  let marks = verifiers.get(name);
  if (!marks) {
    marks = new SummaryMarks(keys);
    verifiers.set(name, marks);
  }
  return marks;
}

/** Indices of the request's summary messages: trusted ones (or, without a session, every tagged one). */
function summaryMessages(messages: readonly ReadMessage[], input: SoundRequestInput): Set<number> {
  const found = new Set<number>();
  messages.forEach((message, index) => {
    const at = message.text.search(SUMMARY_TAG);
    if (at < 0) return;
    if (input.sessionId === undefined) found.add(index);
    else if (marksFor(input.summaryKeys).verify(input.sessionId, message.text.slice(at).trim()))
      found.add(index);
  });
  return found;
}

/** The newest message of the given history is the request's last, sent as given. */
function newestViolations(
  request: ReadRequest,
  given: readonly ReadMessage[],
  input: SoundRequestInput,
): SoundRequestViolation[] {
  const newest = given.at(-1);
  if (!newest) return [];
  const last = request.messages.length - 1;
  const sent = request.messages[last];
  const violation = (message: string): SoundRequestViolation[] => [
    { rule: 'newest_message', message, ...(last >= 0 ? { index: last } : {}) },
  ];
  if (!sent) return violation('the request has no messages; the newest given message is not sent');
  const wanted = atomsOf([newest]);
  const sentAtoms = atomsOf(request.messages).slice(-wanted.length);
  if (!sameAtoms(wanted, sentAtoms) && !cutToFit(request, newest, wanted, sentAtoms, input))
    return violation(
      `the newest message is not sent as given: ${describeAtoms(wanted)} became ${describeAtoms(sentAtoms)}`,
    );
  return [];
}

/**
 * The one exception to "as given": a newest message too large to fit whole may be cut around
 * the marker, when the request with it whole would be over the budget (an output bigger than
 * what the window leaves it). Checked only when the window is known.
 */
function cutToFit(
  request: ReadRequest,
  newest: ReadMessage,
  wanted: readonly Atom[],
  sentAtoms: readonly Atom[],
  input: SoundRequestInput,
): boolean {
  if (input.maxContextTokens === undefined || wanted.length !== sentAtoms.length) return false;
  if (!sentAtoms.every((atom, k) => atom.text === wanted[k]!.text || piecesOf(atom.text) !== undefined))
    return false;
  if (!sentAtoms.every((atom, k) => holds(atom, wanted[k]!))) return false;
  // The request's own count, grown by what the newest adds whole: the library's count of both
  // read in the format-free form (the given history may be in another format than the request).
  const model = input.model ?? 'gpt-4o';
  const sent: ReadRequest = { format: 'compact', messages: request.messages };
  const whole: ReadRequest = { format: 'compact', messages: [...request.messages.slice(0, -1), newest] };
  const grown = libraryCount(whole, model) - libraryCount(sent, model);
  return countOf(request, input) + grown > budgetOf(request, input, input.maxContextTokens);
}

/** The most the prompt may take: the budget, less any reply room the request asks beyond it. */
function budgetOf(request: ReadRequest, input: SoundRequestInput, window: number): number {
  const budget = input.budgetTokens ?? window;
  const reply = request.replyTokens ?? 0;
  return reply < window ? Math.min(budget, window - reply) : budget;
}

function countOf(request: ReadRequest, input: SoundRequestInput): number {
  return input.countTokens ? input.countTokens(request) : libraryCount(request, input.model ?? 'gpt-4o');
}

/**
 * The request's messages, the summary aside, are the given history's in order (a subsequence
 * of its atoms), each as given or replaced by a placeholder for what it held. Greedy matching
 * is exact for a subsequence: taking the earliest match never loses one.
 */
function foreignViolations(
  request: ReadRequest,
  given: readonly ReadMessage[],
  summaries: ReadonlySet<number>,
): SoundRequestViolation[] {
  const held = atomsOf(given);
  const out: SoundRequestViolation[] = [];
  let k = 0;
  for (const atom of atomsOf(request.messages)) {
    if (summaries.has(atom.message)) continue;
    let j = k;
    while (j < held.length && !holds(atom, held[j]!)) j++;
    if (j === held.length) {
      out.push({
        rule: 'foreign_content',
        message: `message ${atom.message} (${describeAtoms([atom])}) is not in the given history at or after its place`,
        index: atom.message,
      });
      if (out.length >= 5) break;
      continue;
    }
    k = j + 1;
  }
  return out;
}

const counters = new Map<string, CompactManager>();

/** The library's count of a request (system prompt, tool schemas and messages). */
function libraryCount(request: ReadRequest, model: string): number {
  let manager = counters.get(model);
  if (!manager) {
    manager = new CompactManager({ model, maxContextTokens: 1_000_000 });
    counters.set(model, manager);
  }
  const messages =
    request.format === 'compact'
      ? request.messages.flatMap(chatWiresOf)
      : request.messages.map((m) => m.wire);
  const format = request.format === 'compact' ? 'openai-chat' : request.format;
  const system = request.system as string | readonly unknown[] | undefined;
  return manager.estimate(messages, {
    format,
    ...(request.tools ? { tools: request.tools } : {}),
    ...(typeof system === 'string' || Array.isArray(system) ? { system } : {}),
  }).total;
}

/**
 * A message in Chat form: one `tool` message per result (an Anthropic user turn holds several,
 * each counted), then its text, if any, as a message of its own.
 */
function chatWiresOf(message: ReadMessage): unknown[] {
  if (message.toolResults.length === 0) return [chatWireOf(message)];
  const results: unknown[] = message.toolResults.map((result) => ({
    role: 'tool',
    tool_call_id: result.callId,
    content: result.output,
  }));
  return message.text === '' ? results : [...results, { role: 'user', content: message.text }];
}

function chatWireOf(message: ReadMessage): unknown {
  const wire: Record<string, unknown> = {
    role: message.role === 'tool' ? 'user' : message.role,
    content: message.text,
  };
  if (message.toolCalls.length > 0)
    wire.tool_calls = message.toolCalls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: call.arguments },
    }));
  return wire;
}

function windowViolations(request: ReadRequest, input: SoundRequestInput): SoundRequestViolation[] {
  if (input.maxContextTokens === undefined) return [];
  const tokens = countOf(request, input);
  // Providers refuse a prompt that passes the window with the reply it asks for.
  const reply = request.replyTokens ?? 0;
  if (tokens + reply <= input.maxContextTokens) return [];
  const asked = reply > 0 ? ` and the ${reply} asked for the reply` : '';
  return [
    {
      rule: 'over_window',
      message: `${tokens} tokens${asked}, over the window of ${input.maxContextTokens}`,
    },
  ];
}
