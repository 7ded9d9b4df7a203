/**
 * Reasoning an assistant turn carries (Anthropic thinking with its signature, OpenAI reasoning
 * with its item id) is bound to the turn on the wire: the provider takes it whole or not at
 * all, and refuses a tool-loop turn whose thinking went missing. The AI SDK and LangChain
 * integrations hand the manager an assistant turn as one Chat text that opens with that
 * reasoning; when the last-resort cut shortens the turn, this says which part of the cut text
 * is the visible text, so the reasoning goes back as it came and only that text changes.
 */

/**
 * The visible text of `cut`, the cut Chat text of a turn whose text opened with `head` (its
 * leading reasoning, joined as the conversion joins it): what follows that head, or
 * `undefined` when there is no head or the cut reached into it.
 */
export function textAfterReasoning(cut: string, head: string): string | undefined {
  if (head === '') return undefined;
  if (cut === head) return '';
  return cut.startsWith(`${head}\n`) ? cut.slice(head.length + 1) : undefined;
}
