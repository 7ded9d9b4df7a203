import type { FunctionTool, RunContext } from '@openai/agents';
import type { RecallArchive } from '../../recall/recall-archive.js';
import {
  RECALL_INPUT_SCHEMA_STRICT,
  RECALL_TOOL_DESCRIPTION,
  RECALL_TOOL_NAME,
  resolveRecallSession,
  runRecallTool,
} from '../../recall/recall-tool.js';
import { loadAgents } from './agents-tracing.js';

/** The shape Agents JS wants for a strict JSON-schema tool (its own type is not exported). */
type StrictJsonSchema = {
  type: 'object';
  properties: Record<string, never>;
  required: string[];
  additionalProperties: false;
};

/** Options of {@link recallTool}. */
export interface AgentsRecallToolOptions<TContext = unknown> {
  /** The archive the manager writes through (`new RecallArchive(storage)`, its `storage` given to the manager). */
  recall: RecallArchive;
  /**
   * The conversation to recall from: the same id the compaction hook uses. A string, or a
   * function of the run context. The model never chooses it.
   * @default `context.sessionId` of the run context when it is a string
   */
  sessionId?: string | ((context: TContext | undefined) => string);
  /** @default 'recall' */
  name?: string;
}

/**
 * The recall tool for an Agents JS agent (a strict function `tool()`): by `ref` it returns
 * the archived original a placeholder names, paged; by `query` the best passages with
 * their refs. A refused recall (forged ref, huge page) comes back as the tool's text, so the
 * model can correct itself. Async because `@openai/agents` (an optional peer) is imported lazily.
 *
 * @example
 * ```ts
 * const recall = new RecallArchive(fsStorage());
 * const manager = new CompactManager({ model: 'gpt-4o', storage: recall.storage });
 * const agent = new Agent({ name: 'Coder', tools: [...tools, await recallTool({ recall, sessionId: 'chat-42' })] });
 * await run(agent, input, { callModelInputFilter: compactionInputFilter(manager, { sessionId: 'chat-42' }) });
 * ```
 */
export async function recallTool<TContext = unknown>(
  options: AgentsRecallToolOptions<TContext>,
): Promise<FunctionTool<TContext>> {
  const { tool } = await loadAgents();
  const session =
    options.sessionId ??
    ((context: TContext | undefined) => {
      const id = (context as { sessionId?: unknown } | undefined)?.sessionId;
      return typeof id === 'string' ? id : '';
    });
  return tool({
    name: options.name ?? RECALL_TOOL_NAME,
    description: RECALL_TOOL_DESCRIPTION,
    parameters: RECALL_INPUT_SCHEMA_STRICT as unknown as StrictJsonSchema,
    strict: true,
    async execute(input: unknown, runContext?: RunContext<unknown>) {
      const sessionId = resolveRecallSession(session, runContext?.context as TContext | undefined);
      return (await runRecallTool(options.recall, sessionId, input)).text;
    },
  }) as unknown as FunctionTool<TContext>;
}
