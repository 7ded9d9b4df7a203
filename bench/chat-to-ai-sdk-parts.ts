/** Bench helper: OpenAI Chat messages as AI SDK prompt parts (bench/path-blocks.ts). */
interface ChatLike {
  role: string;
  content?: string | null;
  tool_call_id?: string;
  tool_calls?: { id: string; function: { name: string; arguments: string } }[];
}

/** OpenAI Chat messages as AI SDK messages (a prompt's parts, which `ModelMessage` accepts too). */
export function chatToAiSdkParts(chat: readonly unknown[]): unknown[] {
  const names = new Map<string, string>();
  return (chat as ChatLike[]).map((message) => {
    const text = message.content ? [{ type: 'text', text: message.content }] : [];
    if (message.role === 'assistant') {
      const calls = (message.tool_calls ?? []).map((call) => {
        names.set(call.id, call.function.name);
        const input = JSON.parse(call.function.arguments) as unknown;
        return { type: 'tool-call', toolCallId: call.id, toolName: call.function.name, input };
      });
      return { role: 'assistant', content: [...text, ...calls] };
    }
    if (message.role === 'tool') {
      const id = message.tool_call_id ?? '';
      const output = { type: 'text', value: message.content ?? '' };
      return {
        role: 'tool',
        content: [{ type: 'tool-result', toolCallId: id, toolName: names.get(id), output }],
      };
    }
    return {
      role: message.role === 'developer' ? 'system' : message.role,
      content: message.role === 'user' ? text : message.content,
    };
  });
}
