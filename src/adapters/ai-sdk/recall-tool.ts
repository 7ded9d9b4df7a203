import type { Tool, ToolExecutionOptions } from 'ai';
import type { RecallArchive } from '../../recall/recall-archive.js';
import {
  RECALL_INPUT_SCHEMA,
  RECALL_TOOL_DESCRIPTION,
  type RecallToolInput,
  resolveRecallSession,
  runRecallTool,
} from '../../recall/recall-tool.js';
import { loadAi } from './load-ai.js';

/** Options of {@link recallTool}. */
export interface AiSdkRecallToolOptions {
  /** The archive the manager writes through (`new RecallArchive(storage)`, its `storage` given to the manager). */
  recall: RecallArchive;
  /**
   * The conversation to recall from: the same id the middleware uses. A string, or a function
   * of the call's `experimental_context`. The model never chooses it.
   */
  sessionId: string | ((context: unknown) => string);
}

/** The error a refused recall raises inside `execute`; the AI SDK sends its message back as a tool error. */
export class RecallToolCallError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RecallToolCallError';
  }
}

/**
 * The recall tool for the Vercel AI SDK (`tool()` with a JSON schema): by `ref` it returns
 * the archived original a placeholder names, paged; by `query` the best passages with their
 * refs. A refused recall (forged ref, huge page) is a tool error the model reads. Async
 * because `ai` (an optional peer) is imported lazily.
 *
 * @example
 * ```ts
 * const recall = new RecallArchive(fsStorage());
 * const manager = new CompactManager({ model: 'gpt-4o', storage: recall.storage });
 * const model = wrapLanguageModel({ model: openai('gpt-4o'), middleware: compactionMiddleware(manager, { sessionId: 'chat-42' }) });
 * await generateText({ model, tools: { ...tools, recall: await recallTool({ recall, sessionId: 'chat-42' }) }, messages });
 * ```
 */
export async function recallTool(options: AiSdkRecallToolOptions): Promise<Tool<RecallToolInput, string>> {
  const { tool, jsonSchema } = await loadAi();
  return tool<RecallToolInput, string>({
    description: RECALL_TOOL_DESCRIPTION,
    inputSchema: jsonSchema<RecallToolInput>(
      RECALL_INPUT_SCHEMA as unknown as Parameters<typeof jsonSchema>[0],
    ),
    async execute(input: RecallToolInput, execution: ToolExecutionOptions) {
      const sessionId = resolveRecallSession(options.sessionId, execution.experimental_context);
      const result = await runRecallTool(options.recall, sessionId, input);
      if (result.isError) throw new RecallToolCallError(result.text);
      return result.text;
    },
  });
}
