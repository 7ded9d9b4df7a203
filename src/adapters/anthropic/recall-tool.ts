import type { RecallArchive } from '../../recall/recall-archive.js';
import {
  RECALL_INPUT_SCHEMA,
  RECALL_TOOL_DESCRIPTION,
  RECALL_TOOL_NAME,
  runRecallTool,
} from '../../recall/recall-tool.js';

/** The recall tool as an Anthropic Messages tool (`tools: [definition.tool]`). */
export interface AnthropicRecallTool {
  name: string;
  description: string;
  input_schema: typeof RECALL_INPUT_SCHEMA;
}

/** A `tool_use` block of an assistant message. */
export interface AnthropicToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: unknown;
}

/** The `tool_result` block answering a recall `tool_use`. */
export interface AnthropicRecallToolResult {
  type: 'tool_result';
  tool_use_id: string;
  content: string;
  is_error?: true;
}

/** Options of {@link recallToolDefinition}. */
export interface AnthropicRecallToolOptions {
  /** The archive the manager writes through (`new RecallArchive(storage)`, its `storage` given to the manager). */
  recall: RecallArchive;
  /** The conversation to recall from: the same id `withCompaction` uses. The model never chooses it. */
  sessionId: string;
  /** @default 'recall' */
  name?: string;
}

/** The recall tool schema and its handler, for a hand-written Anthropic tool loop. */
export interface AnthropicRecallToolDefinition {
  /** Put it in `tools`. */
  tool: AnthropicRecallTool;
  /** True when `block` is a `tool_use` of this tool. */
  handles(block: unknown): block is AnthropicToolUseBlock;
  /** Runs one recall `tool_use`; a refused recall is a `tool_result` with `is_error: true`. */
  handle(block: AnthropicToolUseBlock): Promise<AnthropicRecallToolResult>;
}

/**
 * The recall tool for the Anthropic SDK: the schema to send and the handler of its
 * `tool_use` blocks. By `ref` it returns the archived original a placeholder names, paged; by
 * `query` the best passages with their refs. Needs no SDK import.
 *
 * @example
 * ```ts
 * const recall = new RecallArchive(fsStorage());
 * const manager = new CompactManager({ model: 'claude-sonnet-4-6', storage: recall.storage });
 * const anthropic = withCompaction(new Anthropic(), manager, { sessionId: threadId });
 * const recaller = recallToolDefinition({ recall, sessionId: threadId });
 * const reply = await anthropic.messages.create({ model, max_tokens, messages, tools: [...tools, recaller.tool] });
 * for (const block of reply.content) if (recaller.handles(block)) results.push(await recaller.handle(block));
 * ```
 */
export function recallToolDefinition(options: AnthropicRecallToolOptions): AnthropicRecallToolDefinition {
  const name = options.name ?? RECALL_TOOL_NAME;
  if (typeof options.sessionId !== 'string' || options.sessionId === '')
    throw new TypeError('recallToolDefinition: sessionId must be a non-empty string');
  return {
    tool: { name, description: RECALL_TOOL_DESCRIPTION, input_schema: RECALL_INPUT_SCHEMA },
    handles(block): block is AnthropicToolUseBlock {
      const b = block as Partial<AnthropicToolUseBlock> | null;
      return !!b && b.type === 'tool_use' && b.name === name && typeof b.id === 'string';
    },
    async handle(block) {
      const result = await runRecallTool(options.recall, options.sessionId, block.input);
      return {
        type: 'tool_result',
        tool_use_id: block.id,
        content: result.text,
        ...(result.isError ? { is_error: true as const } : {}),
      };
    },
  };
}
