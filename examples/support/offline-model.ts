/**
 * Shared by the examples: when no API key is set, a local server on 127.0.0.1 stands in for
 * the provider (it speaks the OpenAI Chat, Responses and Anthropic Messages wire formats) and
 * plays a tool-using model; with a key, the examples talk to the real provider.
 */
import {
  type ProviderTestServer,
  startProviderTestServer,
  type ToolLoopHandlerOptions,
  toolLoopHandler,
} from 'agent-compaction/testing';

/** Where the example's model calls go. */
export interface ModelEndpoint {
  /** True when a local scripted server answers (no API key set). */
  offline: boolean;
  /** Base URL for the OpenAI clients (`.../v1`), or undefined for the real API. */
  openaiBaseURL?: string;
  /** Base URL for the Anthropic client, or undefined for the real API. */
  anthropicBaseURL?: string;
  /** API key to use (a placeholder offline). */
  apiKey: string;
  /** The local server, offline. */
  server?: ProviderTestServer;
  close(): Promise<void>;
}

/**
 * Uses the real provider when `keyVariable` is set (and `EXAMPLES_OFFLINE` is not), otherwise
 * starts the local scripted model.
 */
export async function modelEndpoint(
  keyVariable: string,
  script: ToolLoopHandlerOptions,
): Promise<ModelEndpoint> {
  const key = process.env[keyVariable];
  if (key && process.env.EXAMPLES_OFFLINE !== '1') {
    return { offline: false, apiKey: key, close: async () => {} };
  }
  const server = await startProviderTestServer({ handler: toolLoopHandler(script) });
  return {
    offline: true,
    openaiBaseURL: server.openaiBaseURL,
    anthropicBaseURL: server.anthropicBaseURL,
    apiKey: 'offline-placeholder-key',
    server,
    close: () => server.close(),
  };
}

/** A deterministic file body, for the example tools. */
export function fakeFile(path: string, lines = 40): string {
  return Array.from(
    { length: lines },
    (_, line) => `// ${path}:${line + 1} export function step${line}() { return ${line}; }`,
  ).join('\n');
}
