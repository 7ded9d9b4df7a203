/**
 * A message that carries a signed summary and other text (a framework merged the summary turn
 * with the next user turn, or added a reminder before it): the summary is the session's and
 * goes as the manager's own summary message; the text around it is the caller's content, sent
 * where the message stands and folded or kept like any other message.
 */
import type { TokenCounter } from '../../counting/token-counter.js';
import type { MessageCodec } from '../../messages/formats/message-codec.js';
import type { CompactMessage } from '../../messages/message.js';
import type { IndexedMessage } from '../../messages/message-index.js';

/** The message without its signed summary: what is sent, its tokens, and its parse. */
export interface ContentAroundSummary {
  wire: unknown;
  tokens: number;
  content: CompactMessage;
}

/**
 * `value` (a JSON copy of a wire message) with the first occurrence of `signed` removed from
 * its strings; a text block left empty is dropped. Returns true once removed.
 */
function removeFrom(value: unknown, signed: string): boolean {
  if (Array.isArray(value)) {
    for (let k = 0; k < value.length; k++) {
      const element = value[k];
      if (typeof element === 'string' && element.includes(signed)) {
        value[k] = element.replace(signed, '').trim();
        return true;
      }
      if (element !== null && typeof element === 'object' && removeFrom(element, signed)) {
        const text = (element as { text?: unknown }).text;
        if (text === '' && Object.keys(element).every((key) => key === 'type' || key === 'text'))
          value.splice(k, 1);
        return true;
      }
    }
    return false;
  }
  if (value === null || typeof value !== 'object') return false;
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    const field = record[key];
    if (typeof field === 'string' && field.includes(signed)) {
      record[key] = field.replace(signed, '').trim();
      return true;
    }
    if (field !== null && typeof field === 'object' && removeFrom(field, signed)) return true;
  }
  return false;
}

/**
 * The caller's content of `item` around its signed summary `signed`, or `undefined` when the
 * summary cannot be taken out of the message's wire form (it is then sent whole, as content).
 */
export function contentAroundSummary(
  codec: MessageCodec,
  counter: TokenCounter,
  item: IndexedMessage,
  signed: string,
): ContentAroundSummary | undefined {
  const wire = JSON.parse(JSON.stringify(item.entry.wire)) as unknown;
  if (!removeFrom(wire, signed)) return undefined;
  const parsed = codec.parse(wire, item.index);
  const content = { ...parsed, id: item.id, index: item.index };
  return { wire, tokens: counter.countMessage(content), content };
}
