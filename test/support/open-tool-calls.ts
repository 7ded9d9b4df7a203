/**
 * Whether a history ends with tool calls still unanswered (OpenAI Chat, Responses items or
 * Anthropic messages). A model call is never sent such a history, and the manager rejects it
 * (`invalid_messages`); loops that replay a session message by message skip those prefixes.
 */
export function hasOpenToolCalls(messages: readonly unknown[]): boolean {
  const open = new Map<string, number>();
  const call = (id: unknown) => {
    if (typeof id === 'string') open.set(id, (open.get(id) ?? 0) + 1);
  };
  const answer = (id: unknown) => {
    if (typeof id !== 'string') return;
    const n = open.get(id) ?? 0;
    if (n <= 1) open.delete(id);
    else open.set(id, n - 1);
  };
  for (const raw of messages) {
    const m = raw as Record<string, unknown>;
    if (Array.isArray(m.tool_calls)) for (const c of m.tool_calls) call((c as { id?: unknown }).id);
    if (m.role === 'tool') answer(m.tool_call_id);
    const type = typeof m.type === 'string' ? m.type : '';
    if (type.endsWith('_call')) call(m.call_id ?? m.callId);
    if (type.endsWith('_output') || type.endsWith('_result')) answer(m.call_id ?? m.callId);
    if (Array.isArray(m.content)) {
      for (const block of m.content as Record<string, unknown>[]) {
        if (block?.type === 'tool_use') call(block.id);
        if (block?.type === 'tool_result') answer(block.tool_use_id);
      }
    }
  }
  return open.size > 0;
}
