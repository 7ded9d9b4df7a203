/** Who wrote a message, as far as replay cares. */
type Speaker = 'model' | 'setup' | 'input';

/** The model's own items (any wire format), the setup (system, developer), or input to the model. */
function speakerOf(message: unknown): Speaker {
  const wire = message as { role?: unknown; type?: unknown };
  if (wire.role === 'assistant' || wire.role === 'model') return 'model';
  if (wire.role === 'system' || wire.role === 'developer') return 'setup';
  const type = typeof wire.type === 'string' ? wire.type : '';
  // Responses items the model produced: its calls and its reasoning.
  if (type === 'reasoning' || (type.endsWith('_call') && !type.endsWith('_call_output'))) return 'model';
  return 'input';
}

/**
 * Where a live agent would have called the model: after a user message or a tool result
 * whose next message is the model's (or that ends the transcript). Returns, for each call,
 * how many messages of the history it sees.
 *
 * @example
 * ```ts
 * callPoints([system, user, assistantWithCalls, toolA, toolB, assistant]); // [2, 5]
 * ```
 */
export function callPoints(messages: readonly unknown[]): number[] {
  const points: number[] = [];
  for (let i = 0; i < messages.length; i++) {
    if (speakerOf(messages[i]) !== 'input') continue;
    const next = messages[i + 1];
    if (next === undefined || speakerOf(next) === 'model') points.push(i + 1);
  }
  return points;
}
