/**
 * The OpenAI Chat form of a LangChain conversation, kept between model calls: an agent's state
 * grows by appending, so each call converts only the messages it has not seen. The messages
 * already converted are checked by identity (the same object at the same position, its
 * `content` and `tool_calls` not replaced), which costs no lookup and no allocation.
 */
import type { BaseMessage } from '@langchain/core/messages';
import { langChainToChat } from './langchain-messages.js';

/** What was converted of one conversation, position by position. */
interface Converted {
  /** True while a model call reads `chat` (another call of the conversation converts apart). */
  leased: boolean;
  readonly messages: BaseMessage[];
  readonly contents: unknown[];
  readonly calls: unknown[];
  readonly chat: unknown[];
}

type Fields = { content?: unknown; tool_calls?: unknown };

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
  toChat(messages: readonly BaseMessage[]): { chat: unknown[]; release: () => void } {
    const first = messages[0];
    if (first === undefined) return { chat: [], release: () => {} };
    let converted = this.#conversations.get(first);
    if (converted?.leased) return { chat: langChainToChat(messages), release: () => {} };
    if (!converted) {
      converted = { leased: false, messages: [], contents: [], calls: [], chat: [] };
      this.#conversations.set(first, converted);
    }
    const lease = converted;
    lease.leased = true;
    return {
      chat: this.#extend(lease, messages),
      release: () => {
        lease.leased = false;
      },
    };
  }

  #extend(converted: Converted, messages: readonly BaseMessage[]): unknown[] {
    const held = Math.min(converted.messages.length, messages.length);
    let same = 0;
    while (same < held) {
      const message = messages[same] as unknown as Fields;
      if (
        message !== (converted.messages[same] as unknown) ||
        message.content !== converted.contents[same] ||
        message.tool_calls !== converted.calls[same]
      )
        break;
      same++;
    }
    if (same < converted.messages.length) {
      for (const list of [converted.messages, converted.contents, converted.calls, converted.chat])
        list.length = same;
    }
    if (same < messages.length) {
      const added = messages.slice(same);
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
