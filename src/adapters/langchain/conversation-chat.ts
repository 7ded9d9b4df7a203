/**
 * The OpenAI Chat form of a LangChain conversation, kept between model calls: an agent's state
 * grows by appending, so each call converts only the messages it has not seen. The messages
 * already converted are checked by identity (the same object at the same position), and the
 * newest and a rotating slice of the older ones by their `content` and `tool_calls` (not
 * replaced), which costs no lookup and no allocation.
 */
import type { BaseMessage } from '@langchain/core/messages';
import type { LazyHistory } from '../../core/preflight/quick/quick-resume.js';
import { TimeSlice } from '../../core/time-slice.js';
import {
  chatToLangChainInPlace,
  type LangChainMessageClasses,
  langChainToChat,
} from './langchain-messages.js';

/** What was converted of one conversation, position by position. */
interface Converted {
  /** True while a model call reads `chat` (another call of the conversation converts apart). */
  leased: boolean;
  /** Where the next audit of older messages' fields starts. */
  audit: number;
  readonly messages: BaseMessage[];
  readonly contents: unknown[];
  readonly calls: unknown[];
  readonly chat: unknown[];
  /**
   * The last result turned back, position by position: the Chat message and the LangChain
   * message it became. A result that only grew reads them back by position (two arrays read in
   * order) instead of touching every message again.
   */
  readonly backChat: unknown[];
  readonly backMessages: BaseMessage[];
}

type Fields = { content?: unknown; tool_calls?: unknown };

/** The newest messages whose fields are checked on every call. */
const RECHECK_NEWEST = 32;
/** Older messages whose fields are checked per call, in rotation. */
const AUDIT_PER_CALL = 512;
/** New messages turned back at once; more are turned in slices (see `turnBack`). */
const SLICE_FROM = 256;
/** Messages turned back between two looks at the clock. */
const SLICE_MESSAGES = 128;
/**
 * Messages converted between two looks at the clock in {@link ConversationChat.toChatInSlices}:
 * a cold conversion costs up to about 45 us a message (its first batch of 256 held the loop
 * about 11 ms on a fresh process, before the work around it), 32 stay near 1.5 ms.
 */
const CONVERT_BATCH = 32;

/**
 * Conversions of conversations, each keyed by its first message object: a conversation the
 * caller drops takes its conversion with it, whatever the manager or the middleware keep.
 */
export class ConversationChat {
  readonly #conversations = new WeakMap<object, Converted>();

  /**
   * The Chat form of `messages`, and `release` to call when the model call is over: until
   * then the array is the call's (the conversation's next call extends it afterwards; a call
   * of the same conversation made meanwhile converts on its own, with the per-message cache).
   */
  toChat(messages: readonly BaseMessage[]): ConversationLease {
    const lease = this.#lease(messages);
    if (!lease.converted) return lease;
    lease.chat = this.#extend(lease.converted, messages, messages.length);
    return lease;
  }

  /**
   * {@link toChat}, converting many new messages (a first call of a long history) in slices
   * that give the event loop a turn every few milliseconds.
   */
  async toChatInSlices(messages: readonly BaseMessage[]): Promise<ConversationLease> {
    const lease = this.#lease(messages);
    const converted = lease.converted;
    if (!converted) return lease;
    const slice = new TimeSlice();
    let done = this.#extend(converted, messages, Math.min(messages.length, CONVERT_BATCH)).length;
    try {
      while (done < messages.length) {
        if (slice.due()) await slice.pause();
        done = this.#extend(converted, messages, Math.min(messages.length, done + CONVERT_BATCH)).length;
      }
    } catch (error) {
      lease.release();
      throw error;
    }
    lease.chat = converted.chat;
    return lease;
  }

  /** True when this converter has converted the conversation of `messages` before. */
  knows(messages: readonly BaseMessage[]): boolean {
    const first = messages[0];
    return first !== undefined && this.#conversations.has(first);
  }

  /**
   * The Chat form of `messages` on demand, for a first call of a long conversation (a quick
   * first call of the manager reads only a few of them, see `LazyHistory`); `all()` converts
   * them all in slices, as {@link toChatInSlices}, into a copy (the conversation's own array
   * is extended by its later calls).
   */
  lazy(messages: readonly BaseMessage[]): LazyHistory {
    return {
      length: messages.length,
      at: (i) => langChainToChat([messages[i]!])[0],
      all: async () => {
        const lease = await this.toChatInSlices(messages);
        try {
          return lease.chat.slice(0, messages.length);
        } finally {
          lease.release();
        }
      },
    };
  }

  /** A lease of the conversation's conversion (`converted` unset: converted apart, `chat` ready). */
  #lease(messages: readonly BaseMessage[]): ConversationLease & { converted?: Converted } {
    const first = messages[0];
    if (first === undefined) return { chat: [], release: () => {}, back: chatToLangChainInPlace };
    let converted = this.#conversations.get(first);
    if (converted?.leased)
      return { chat: langChainToChat(messages), release: () => {}, back: chatToLangChainInPlace };
    // Slices of one first call convert a prefix at a time: the audits below run on the full history.
    if (!converted) {
      converted = {
        leased: false,
        audit: 0,
        messages: [],
        contents: [],
        calls: [],
        chat: [],
        backChat: [],
        backMessages: [],
      };
      this.#conversations.set(first, converted);
    }
    const lease = converted;
    lease.leased = true;
    return {
      chat: lease.chat,
      converted: lease,
      release: () => {
        lease.leased = false;
      },
      back: (result, classes) => turnBack(lease, result, classes),
    };
  }

  /** Brings the conversion up to date with `messages`, converting new ones up to position `upTo`. */
  #extend(converted: Converted, messages: readonly BaseMessage[], upTo: number): unknown[] {
    const held = Math.min(converted.messages.length, messages.length);
    // Every position by identity (two arrays read in order), then the fields of the newest and
    // of a rotating slice of the older ones: an old message edited in place is found within
    // held / AUDIT_PER_CALL calls, as the manager's own index does.
    let same = 0;
    while (same < held && messages[same] === converted.messages[same]) same++;
    const fieldsHeld = (i: number) => {
      const message = messages[i] as unknown as Fields;
      return message.content === converted.contents[i] && message.tool_calls === converted.calls[i];
    };
    for (let i = Math.max(0, same - RECHECK_NEWEST); i < same; i++) {
      if (fieldsHeld(i)) continue;
      same = i;
      break;
    }
    let audit = converted.audit < same ? converted.audit : 0;
    for (const end = Math.min(same, audit + AUDIT_PER_CALL); audit < end; audit++) {
      if (fieldsHeld(audit)) continue;
      same = audit;
      break;
    }
    converted.audit = audit;
    if (same < converted.messages.length) {
      for (const list of [converted.messages, converted.contents, converted.calls, converted.chat])
        list.length = same;
    }
    const end = Math.max(upTo, same);
    if (same < end) {
      const added = messages.slice(same, end);
      const chat = langChainToChat(added);
      for (let k = 0; k < added.length; k++) {
        const message = added[k]!;
        converted.messages.push(message);
        converted.contents.push((message as unknown as Fields).content);
        converted.calls.push((message as unknown as Fields).tool_calls);
        converted.chat.push(chat[k]);
      }
    }
    return converted.chat;
  }
}

/** One model call's use of a conversation's conversion. */
export interface ConversationLease {
  /** The Chat form of the call's messages. */
  chat: unknown[];
  /** Ends the call's use of `chat`. */
  release: () => void;
  /** Turns a result of the manager (an array the caller owns) back into LangChain messages, in place. */
  back: (result: unknown[], classes: LangChainMessageClasses) => BaseMessage[] | Promise<BaseMessage[]>;
}

/**
 * {@link chatToLangChainInPlace}, reading back by position what the last result already turned;
 * many new messages (a first call of a long history) are turned in slices.
 */
async function turnBack(
  converted: Converted,
  result: unknown[],
  classes: LangChainMessageClasses,
): Promise<BaseMessage[]> {
  const { backChat, backMessages } = converted;
  const held = Math.min(backChat.length, result.length);
  let same = 0;
  while (same < held && result[same] === backChat[same]) same++;
  backChat.length = same;
  backMessages.length = same;
  const slice = result.length - same > SLICE_FROM ? new TimeSlice() : undefined;
  for (let start = same; start < result.length; start += SLICE_MESSAGES) {
    const chat = result.slice(start, start + SLICE_MESSAGES);
    const turned = chatToLangChainInPlace(chat, classes);
    for (let k = 0; k < turned.length; k++) {
      backChat.push(result[start + k]);
      backMessages.push(turned[k]!);
    }
    if (slice?.due()) await slice.pause();
  }
  for (let i = 0; i < result.length; i++) result[i] = backMessages[i];
  return result as BaseMessage[];
}
