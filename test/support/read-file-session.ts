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

/** A tool output of about `tokens` tokens (four characters each), distinct per call. */
export function readFileOutput(call: number, tokens: number): string {
  return `${call} `.repeat(Math.ceil((tokens * 4) / `${call} `.length));
}

/**
 * Call `call`'s output size: 200 to 3,000 tokens at a 128k window (deterministic), scaled to
 * `window` and by `scale` (at 8k and scale 1, 12 to 187 tokens).
 */
export function scaledOutputTokens(call: number, window: number, scale = 1): number {
  return Math.max(8, Math.round(((200 + ((call * 7919) % 2800)) * window * scale) / 128_000));
}
