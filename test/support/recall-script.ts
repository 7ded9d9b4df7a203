/**
 * A scripted model for the recall tool tests: on each request it makes the next recall call
 * of its script (one call per request, the same call id every time, as models often do),
 * then answers with every tool result it saw, so the test can read what came back.
 */
import { readRequest } from '../../src/testing/agent-model-script.js';
import type { ProviderHandler, RecordedRequest } from '../../src/testing/provider-test-server.js';

/** The handler, and what the model saw. */
export interface RecallScript {
  handler: ProviderHandler;
  /** Tool results seen in the last request, in order. */
  results: () => string[];
  /** The recall tool definition as the SDK sent it in the first request. */
  sentTool: () => Record<string, unknown> | undefined;
}

/** A model that calls `recall` with each input of `calls` in turn, then answers. */
export function recallScript(
  calls: readonly Record<string, unknown>[],
  options: { toolName?: string; reuseIds?: boolean } = {},
): RecallScript {
  const toolName = options.toolName ?? 'recall';
  let last: RecordedRequest | undefined;
  let first: RecordedRequest | undefined;
  const handler: ProviderHandler = (request) => {
    if (request.endpoint === 'other') return undefined;
    first ??= request;
    last = request;
    const view = readRequest(request);
    const done = view.entries.filter((entry) => entry.kind === 'tool_result').length;
    const next = calls[done];
    // OpenAI models often reuse call_0 (the Agents Runner refuses that within a run).
    const id =
      request.endpoint === 'anthropic-messages'
        ? `toolu_${done}`
        : options.reuseIds
          ? 'call_0'
          : `call_${done}`;
    if (next) return { toolCalls: [{ id, name: toolName, arguments: next }] };
    return { text: `Recalled ${done} results.` };
  };
  return {
    handler,
    results: () =>
      last
        ? readRequest(last)
            .entries.filter((entry) => entry.kind === 'tool_result')
            .map((entry) => entry.text)
        : [],
    sentTool: () => {
      const tools = (first?.body as { tools?: Record<string, unknown>[] } | undefined)?.tools ?? [];
      return tools.find(
        (tool) =>
          tool.name === toolName || (tool.function as { name?: string } | undefined)?.name === toolName,
      );
    },
  };
}
