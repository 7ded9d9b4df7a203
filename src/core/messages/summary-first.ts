/**
 * The summary's place when a request must open with a user turn. Anthropic and Gemini refuse a
 * conversation whose first turn (after instructions) is the assistant's; Gemini also refuses a
 * function call that opens it. A compacted request opens with an assistant turn in two ways:
 * the summary (an assistant turn in the OpenAI formats) is the first turn once the first user
 * message is folded, or a pinned tool round kept ahead of the summary opens the request. Either
 * way the summary goes first, as a user turn: ahead of the whole pinned round, never between a
 * call and its result (nor between a reasoning item and what follows it).
 *
 * One rule for every form a request is built in: the manager's Anthropic requests
 * (`../preflight/outcome/assemble.ts` orders them so as they are assembled), and after the
 * manager the integrations that send a Chat-form request to any provider (the AI SDK and
 * LangChain adapters, each with its own messages, and the proxy's Chat route) and the OpenAI
 * Agents filter (Responses items, which the SDK also runs on other providers' models), each
 * through a {@link TurnForm} of its messages.
 */

/** How the rule reads a message: instructions (skipped), a user turn, or any other turn. */
export type OpeningTurn = 'system' | 'user' | 'other';

/** The turns of one form of messages, and the summary written as a user turn in it. */
export interface TurnForm<T> {
  turnOf(message: T): OpeningTurn;
  /** The summary as a user turn (the message itself when it is one). */
  asUser(summary: T): T;
}

/** How a message role reads (`system` and `developer` are instructions). */
export function turnOfRole(role: unknown): OpeningTurn {
  if (role === 'system' || role === 'developer') return 'system';
  return role === 'user' ? 'user' : 'other';
}

/**
 * Where the summary goes among `count` messages ahead of it (`turnAt` reads each): the index of
 * the first turn after the instructions when that turn is not a user's, else `undefined` (the
 * summary stays where it is).
 */
export function summaryPlace(count: number, turnAt: (index: number) => OpeningTurn): number | undefined {
  let first = 0;
  while (first < count && turnAt(first) === 'system') first++;
  return first < count && turnAt(first) !== 'user' ? first : undefined;
}

/**
 * `messages` with the summary first, as a user turn, when the first turn after the instructions
 * is not a user turn (the summary itself, or a pinned round ahead of it); the same array when
 * nothing changes (never modified). A request with no summary goes as it is.
 */
export function summaryFirst<T>(
  messages: readonly T[],
  isSummary: (message: T) => boolean,
  form: TurnForm<T>,
): readonly T[] {
  const first = summaryPlace(messages.length, (index) => form.turnOf(messages[index]!));
  if (first === undefined) return messages;
  const opening = messages[first]!;
  let at = first;
  while (at < messages.length && !isSummary(messages[at]!)) at++;
  if (at === messages.length) return messages;
  const summary = form.asUser(messages[at]!);
  if (at === first && summary === opening) return messages;
  const out = messages.slice();
  out.splice(at, 1);
  out.splice(first, 0, summary);
  return out;
}

type RoleMessage = { readonly role?: unknown };

/**
 * Chat Completions messages, and any messages with the same roles (the AI SDK's): `system` and
 * `developer` are instructions; the summary as a user turn is a copy with `role: 'user'`.
 */
export const CHAT_TURNS: TurnForm<unknown> = {
  turnOf: (message) => turnOfRole((message as RoleMessage | null)?.role),
  asUser(summary) {
    return (summary as RoleMessage).role === 'user' ? summary : { ...(summary as object), role: 'user' };
  },
};

/** The text of a message's content: a string, or its text parts joined. */
function contentText(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  const texts = content.map((part) => (part as { text?: unknown } | null)?.text);
  return texts.every((text) => typeof text === 'string') ? texts.join('') : undefined;
}

/** True when `message` is the summary message whose whole text is `text` (a Chat message or a Responses item). */
export function isSummaryText(message: unknown, text: string | undefined): boolean {
  return text !== undefined && contentText((message as { content?: unknown } | null)?.content) === text;
}

type ResponsesItem = { readonly role?: unknown; readonly type?: unknown; readonly content?: unknown };

/**
 * Responses input items (the OpenAI Agents SDK's, whatever model runs them): items without a
 * role (calls, their outputs, reasoning) are the assistant's turn or answers to it; the summary
 * as a user turn is an `input_text` message.
 */
export const RESPONSES_TURNS: TurnForm<unknown> = {
  turnOf: (item) => turnOfRole((item as ResponsesItem | null)?.role),
  asUser(summary) {
    const item = summary as ResponsesItem;
    if (item.role === 'user') return summary;
    return {
      type: 'message',
      role: 'user',
      content: [{ type: 'input_text', text: contentText(item.content) ?? '' }],
    };
  },
};

/**
 * {@link summaryFirst} over Responses items, the summary the item whose text is `text`: never
 * ahead of a provider `compaction` item (the API drops what precedes it).
 */
export function responsesSummaryFirst<T>(items: readonly T[], text: string | undefined): readonly T[] {
  if (text === undefined) return items;
  const at = items.findIndex((item) => isSummaryText(item, text));
  if (at < 0 || items.slice(0, at).some((item) => (item as ResponsesItem | null)?.type === 'compaction'))
    return items;
  return summaryFirst(items, (item) => isSummaryText(item, text), RESPONSES_TURNS as TurnForm<T>);
}
