/**
 * The reply a call asks for, read from whichever of its fields the SDK or the wire format uses
 * (`max_tokens`, `max_completion_tokens`, `max_output_tokens`, `maxOutputTokens`,
 * `modelSettings.maxTokens`): the largest positive integer among them, as the manager's
 * `replyTokens` option (nothing when none is set).
 */
export function replyTokensOf(...values: readonly unknown[]): { replyTokens?: number } {
  let reply = 0;
  for (const value of values)
    if (typeof value === 'number' && Number.isInteger(value) && value > reply) reply = value;
  return reply > 0 ? { replyTokens: reply } : {};
}

/** The reply a provider request body asks for, in any format: {@link replyTokensOf} its three size fields. */
export function bodyReplyTokens(body: Record<string, unknown> | undefined): { replyTokens?: number } {
  return body === undefined
    ? {}
    : replyTokensOf(body.max_tokens, body.max_completion_tokens, body.max_output_tokens);
}
