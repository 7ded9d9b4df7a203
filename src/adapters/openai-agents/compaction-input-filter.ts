import type { CallModelInputFilter, CallModelInputFilterArgs, ModelInputData } from '@openai/agents';
import { CompactError } from '../../core/errors.js';
import type { CompactManager } from '../../core/manager/compact-manager.js';
import { responsesSummaryFirst } from '../../core/messages/summary-first.js';
import { replyTokensOf } from '../../core/preflight/body/reply-tokens.js';
import { checkAdapterOptions } from '../adapter-options.js';
import { compactWithEvents, describeCompaction } from '../compact-with-events.js';
import { handoffToolSchemas, outputTypeSchema } from './agent-sent-schemas.js';
import { loadAgents, withCompactionSpan } from './agents-tracing.js';
import { rememberFilteredCall } from './compaction-model-provider.js';

/** Options of {@link compactionInputFilter}. */
export interface CompactionInputFilterOptions<TContext = unknown> {
  /**
   * The manager's session id for this conversation: a string, or a function of the filter's
   * arguments (e.g. reading your run context). Use one id per conversation.
   * @default `context.sessionId` when the run context has a string one; without either, the call fails (there is no shared default)
   */
  sessionId?: string | ((args: CallModelInputFilterArgs<TContext>) => string | Promise<string>);
  /**
   * Count the agent's function tool schemas as part of the request, its MCP servers' tools
   * and its handoffs (function tools on the wire) too. The output type's schema is counted
   * either way.
   * @default true
   */
  countTools?: boolean;
  /**
   * Name of the custom span recorded in the SDK trace.
   * @default 'agent.compaction'
   */
  spanName?: string;
}

let filterCalls = 0;
/** How many times any compaction input filter ran (lets a session tell it is used with one). */
export function filterCallCount(): number {
  return filterCalls;
}

const sessionSummaries = new WeakMap<CompactManager, Map<string, string>>();
const REMEMBERED_SUMMARIES = 256;

/**
 * Records that `summaryText` is the summary of the manager session `sessionId` (a
 * `CompactionSession`'s view), so a filter that meets it in a run's input compacts under that
 * session rather than writing a second summary beside it.
 */
export function registerSessionSummary(
  manager: CompactManager,
  summaryText: string,
  sessionId: string,
): void {
  let known = sessionSummaries.get(manager);
  if (!known) {
    known = new Map();
    sessionSummaries.set(manager, known);
  }
  known.delete(summaryText);
  known.set(summaryText, sessionId);
  if (known.size > REMEMBERED_SUMMARIES) known.delete(known.keys().next().value as string);
}

function itemText(item: unknown): string | undefined {
  const content = (item as { content?: unknown } | null)?.content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    const first = content[0] as { text?: unknown } | undefined;
    return typeof first?.text === 'string' ? first.text : undefined;
  }
  return undefined;
}

/**
 * Drops extra copies of the session's summary. The manager sends at most one summary it
 * trusts (its mark verifies, see `summaryKeys`); every other message that looks like a summary
 * (a user message starting with `<COMPACT-SUMMARY v1>`, an assistant item a prompt injection
 * made the model write, an older tag) is ordinary content and is never dropped. Pass
 * `current`, the summary message text of the result (`result.summary.text`): copies of
 * exactly that text after the first are dropped, so the genuine summary is never sent twice.
 * Without `current`, nothing is dropped.
 */
export function dropStaleSummaries<T>(items: readonly T[], current?: string): T[] {
  if (current === undefined) return [...items];
  let seen = false;
  return items.filter((item) => {
    if (itemText(item) !== current) return true;
    if (seen) return false;
    seen = true;
    return true;
  });
}

/** The manager session whose summary `input` carries, when a `CompactionSession` wrote it. */
function summaryOwner(manager: CompactManager, input: readonly unknown[]): string | undefined {
  const known = sessionSummaries.get(manager);
  if (!known) return undefined;
  for (const item of input) {
    const text = itemText(item);
    if (text?.startsWith('<COMPACT-SUMMARY v')) {
      const owner = known.get(text);
      if (owner !== undefined) return owner;
    }
  }
  return undefined;
}

const toolSchemaCache = new WeakMap<object, { source: readonly unknown[]; schemas: unknown[] }>();

/** The agent's function tools as `{type, name, description, parameters}` schemas (cached per agent). */
export function agentToolSchemas(agent: { readonly tools?: readonly unknown[] }): unknown[] {
  const tools = agent.tools ?? [];
  const cached = toolSchemaCache.get(agent);
  if (cached && cached.source === tools && cached.schemas.length <= tools.length) return cached.schemas;
  const schemas = tools.flatMap(functionSchema);
  toolSchemaCache.set(agent, { source: tools, schemas });
  return schemas;
}

/** A function tool's schema as the counter reads it (none for other tools). */
function functionSchema(tool: unknown): unknown[] {
  const t = tool as { type?: string; name?: string; description?: string; parameters?: unknown };
  return t.type === 'function' && typeof t.name === 'string'
    ? [{ type: 'function', name: t.name, description: t.description ?? '', parameters: t.parameters ?? {} }]
    : [];
}

/**
 * The schemas of the tools the agent's MCP servers give it: the runner lists them for every
 * model call and sends them as function tools, so they are counted too (listed as the runner
 * does, from the server's cache when it caches its list).
 */
async function mcpToolSchemas<TContext>(args: CallModelInputFilterArgs<TContext>): Promise<unknown[]> {
  const agent = args.agent as {
    mcpServers?: readonly unknown[];
  } & CallModelInputFilterArgs<TContext>['agent'];
  if (!agent.mcpServers?.length || typeof agent.getMcpTools !== 'function') return [];
  const { RunContext } = await loadAgents();
  const tools = await agent.getMcpTools(new RunContext(args.context as TContext));
  return tools.flatMap(functionSchema);
}

async function resolveSessionId<TContext>(
  option: CompactionInputFilterOptions<TContext>['sessionId'],
  args: CallModelInputFilterArgs<TContext>,
): Promise<string> {
  if (typeof option === 'function') return option(args);
  if (typeof option === 'string') return option;
  const fromContext = (args.context as { sessionId?: unknown } | undefined)?.sessionId;
  if (typeof fromContext === 'string' && fromContext !== '') return fromContext;
  // Never the agent's name or another shared default: one conversation's summary must not
  // reach another's request.
  throw new CompactError(
    'invalid_config',
    'compactionInputFilter: no session id; pass { sessionId } or run with a context that has a sessionId',
    { issues: [{ path: ['sessionId'], message: 'is required' }] },
  );
}

/** The call id of a Responses / Agents SDK item (`call_id` or `callId`), if it has one. */
function callIdOf(item: unknown): string | undefined {
  const i = item as { call_id?: unknown; callId?: unknown } | null;
  const id = i?.call_id ?? i?.callId;
  return typeof id === 'string' ? id : undefined;
}

/**
 * True when `input` answers a call it does not hold: a run whose conversation the server keeps
 * (`previousResponseId`, `conversationId`) hands each model call only what is new since the
 * last response, tool outputs whose calls the server holds. There is nothing here to compact.
 */
function isServerManagedDelta(input: readonly unknown[]): boolean {
  const calls = new Set<string>();
  for (const item of input) {
    const type = (item as { type?: unknown } | null)?.type;
    const id = callIdOf(item);
    if (typeof type !== 'string' || id === undefined) continue;
    if (/_call$/.test(type)) calls.add(id);
    else if (/_(output|result)$/.test(type) && !calls.has(id)) return true;
  }
  return false;
}

/**
 * A `callModelInputFilter` for the OpenAI Agents SDK that runs the manager's preflight right
 * before every model call (the spec's `before_model_call` hook): the input the model receives is
 * compacted (pinned items, the rolling summary, the recent turns with whole tool pairs) whenever
 * it crosses the trigger, counting the instructions and tool schemas. Items are passed through
 * by identity, so the session stores the real history, never the summary. The work is recorded
 * as an `agent.compaction` custom span under the run's trace.
 *
 * @example
 * ```ts
 * import { Agent, run } from '@openai/agents';
 * import { CompactManager } from 'agent-compaction';
 * import { compactionInputFilter } from 'agent-compaction/openai-agents';
 *
 * const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 128_000 });
 * const agent = new Agent({ name: 'Assistant', instructions: 'Be helpful.' });
 * const result = await run(agent, 'Hello', {
 *   callModelInputFilter: compactionInputFilter(manager, { sessionId: 'chat-42' }),
 * });
 * ```
 */
export function compactionInputFilter<TContext = unknown>(
  manager: CompactManager,
  options: CompactionInputFilterOptions<TContext> = {},
): CallModelInputFilter<TContext> & { preserveInputIdentity: true } {
  checkAdapterOptions('compactionInputFilter', manager, options, ['sessionId', 'countTools', 'spanName']);
  const { countTools = true, spanName = 'agent.compaction' } = options;
  const filter = async (args: CallModelInputFilterArgs<TContext>): Promise<ModelInputData> => {
    filterCalls++;
    const { modelData, agent } = args;
    // A server-managed run sends the delta only: passed as it is (the server holds the rest).
    if (isServerManagedDelta(modelData.input)) return modelData;
    // A session's view already holds its summary: compact under that session, never beside it.
    const sessionId =
      summaryOwner(manager, modelData.input) ?? (await resolveSessionId(options.sessionId, args));
    const tools = [
      ...(countTools
        ? [...agentToolSchemas(agent), ...(await mcpToolSchemas(args)), ...(await handoffToolSchemas(args))]
        : []),
      ...outputTypeSchema(agent),
    ];
    return withCompactionSpan(spanName, async (placement) => {
      const { result, events } = await compactWithEvents(manager, sessionId, modelData.input, {
        format: 'openai-responses',
        agent: agent.name,
        ...(modelData.instructions ? { system: modelData.instructions } : {}),
        ...(tools.length > 0 ? { tools } : {}),
        ...replyTokensOf(agent.modelSettings?.maxTokens),
        ...placement,
      });
      // Opens with a user turn whatever model runs the agent (see responsesSummaryFirst).
      const text = result.summary?.text;
      const sent = responsesSummaryFirst(
        dropStaleSummaries(result.messages, text),
        text,
      ) as typeof result.messages;
      rememberFilteredCall(sent, {
        manager,
        sessionId,
        input: modelData.input,
        sentTokens: result.tokensAfter,
        ...(modelData.instructions ? { instructions: modelData.instructions } : {}),
        ...(tools.length > 0 ? { tools } : {}),
      });
      return {
        value: { ...modelData, input: sent },
        data: describeCompaction(sessionId, result, events),
      };
    });
  };
  // The manager never mutates items: let the runner match kept items by identity
  // (read by @openai/agents 0.15+; older versions ignore the flag).
  return Object.assign(filter, { preserveInputIdentity: true as const });
}
