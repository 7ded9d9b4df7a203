/**
 * The coding session the cost tests grow call by call (OpenAI Chat shape): a system prompt,
 * one opening request with a constraint, then one `read_file` round per model call.
 */

/** The system prompt and the opening request. */
export function codingSessionHead(): Record<string, unknown>[] {
  return [
    { role: 'system', content: 'You are a coding agent.' },
    { role: 'user', content: 'Port the billing module; never touch src/generated/.' },
  ];
}

/** One model call's round: the assistant's `read_file` call (with optional text) and its `output`. */
export function readFileRound(
  call: number,
  output: string,
  text: string | null = null,
): Record<string, unknown>[] {
  return [
    {
      role: 'assistant',
      content: text,
      tool_calls: [
        { id: `c${call}`, type: 'function', function: { name: 'read_file', arguments: `{"n":${call}}` } },
      ],
    },
    { role: 'tool', tool_call_id: `c${call}`, content: output },
  ];
}
