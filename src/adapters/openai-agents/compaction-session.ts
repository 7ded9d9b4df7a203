import type {
  AgentInputItem,
  CallModelInputFilter,
  OpenAIResponsesCompactionArgs,
  OpenAIResponsesCompactionAwareSession,
  OpenAIResponsesCompactionResult,
  Session,
} from '@openai/agents';
import { CompactError } from '../../core/errors.js';
import type { CompactManager } from '../../core/manager/compact-manager.js';
import type { CompactionResult } from '../../core/manager/manager-options.js';
import { openaiResponsesCodec } from '../../core/messages/formats/openai-responses.js';
import type { WithMeta } from '../../core/messages/message.js';
import { checkAdapterOptions } from '../adapter-options.js';
import { compactWithEvents, describeCompaction, summaryEventOf } from '../compact-with-events.js';
import { loadAgents, withCompactionSpan } from './agents-tracing.js';
import { compactionInputFilter, filterCallCount, registerSessionSummary } from './compaction-input-filter.js';

const SESSION_OPTIONS = ['sessionId', 'instructions', 'tools', 'writeTimeCompaction'] as const;

/**
 * An Agents SDK input item with the optional `meta` the manager reads (`{ protected: true }`
 * pins it); `meta` is stripped from what the model receives.
 */
export type AgentItem = WithMeta<AgentInputItem>;

/** Options of {@link CompactionSession}. */
export interface CompactionSessionOptions {
  /** The SDK session that stores the history (`MemorySession`, an SQL or Redis session, ...). */
  session: Session;
  /** The manager that decides, summarizes and records events. */
  manager: CompactManager;
  /**
   * The manager's session id.
   * @default the underlying session's `getSessionId()`
   */
  sessionId?: string;
  /**
   * The agent's instructions, counted with the history when the session compacts (the
   * `inputFilter()` counts the real ones on every call).
   */
  instructions?: string;
  /** The agent's tool schemas, counted with the history when the session compacts. */
  tools?: readonly unknown[];
  /**
   * Rewrite the underlying session's history with the compacted view after each compaction
   * (bounded storage, but the full history is gone). Off by default: the raw history stays
   * intact for audit and replay, and the view is computed on read.
   * @default false
   */
  writeTimeCompaction?: boolean;
}

type ItemInfo = { calls: string[]; results: string[] };

function itemInfo(item: AgentInputItem, index: number): ItemInfo {
  try {
    const parsed = openaiResponsesCodec.parse(item, index);
    return {
      calls: parsed.toolCalls.map((call) => call.id),
      results: parsed.toolResults.map((r) => r.callId),
    };
  } catch {
    return { calls: [], results: [] };
  }
}

/**
 * Where the history's open round begins: the round (its reasoning item and calls) of the first
 * call with no result yet, a run waiting for a tool approval or one stopped mid-tool. That
 * round goes as it is, after the compacted rest (a placeholder result would be persisted, and
 * the real one added after it on resume). `items.length` when every call has its result.
 */
function openRoundStart(items: readonly AgentInputItem[]): number {
  const answered = new Set<string>();
  let open = items.length;
  for (let k = items.length - 1; k >= 0; k--) {
    const info = itemInfo(items[k]!, k);
    for (const id of info.results) answered.add(id);
    if (info.calls.some((id) => !answered.has(id))) open = k;
  }
  const joined = (k: number) =>
    k >= 0 &&
    (itemInfo(items[k]!, k).calls.length > 0 || (items[k] as { type?: string }).type === 'reasoning');
  while (open < items.length && joined(open - 1)) open--;
  return open;
}

/**
 * An assistant message item with the id the Responses API gave it: like a call, it belongs to
 * the reasoning item before it ("Item 'msg_...' of type 'message' was provided without its
 * required 'reasoning' item" otherwise).
 */
function identifiedMessage(item: AgentInputItem): boolean {
  const { role, id, type } = item as { role?: unknown; id?: unknown; type?: unknown };
  return role === 'assistant' && typeof id === 'string' && (type === undefined || type === 'message');
}

/**
 * Where a window of `items` starting at `start` may start: after the output items it would
 * open with (calls, identified assistant messages) when the reasoning item they follow is left
 * out (the Responses API refuses them sent without it). Their results then go too (no call in
 * the window).
 */
function roundStart(items: readonly AgentInputItem[], start: number): number {
  const isOutput = (k: number) =>
    k >= 0 && k < items.length && (itemInfo(items[k]!, k).calls.length > 0 || identifiedMessage(items[k]!));
  let before = start - 1;
  while (isOutput(before)) before--;
  if (!isOutput(start) || (items[before] as { type?: string } | undefined)?.type !== 'reasoning')
    return start;
  let after = start;
  while (isOutput(after)) after++;
  return after;
}

/**
 * The most recent `limit` items, never returning a tool result without its call: results whose
 * call fell outside the window are dropped, and so are reasoning items left without the item
 * they belong to, and calls or identified assistant messages left without the reasoning item
 * before them. Returns at most
 * `limit` items, in order.
 */
export function boundaryAwareTail(items: readonly AgentInputItem[], limit?: number): AgentInputItem[] {
  if (limit === undefined || limit >= items.length) return [...items];
  if (limit <= 0) return [];
  const window = items.slice(roundStart(items, items.length - limit));
  const infos = window.map((item, k) => itemInfo(item, k));
  const calls = new Set(infos.flatMap((info) => info.calls));
  const kept = window.filter((_, k) => infos[k]!.results.every((callId) => calls.has(callId)));
  while (kept.length > 0 && (kept[0] as { type?: string }).type === 'reasoning') {
    const next = kept[1] as { type?: string } | undefined;
    if (next && next.type !== 'reasoning') break;
    kept.shift();
  }
  return kept;
}

/**
 * An Agents SDK `Session` that wraps any other session and keeps what the model sees inside the
 * context window: token-based (not a fixed item window), with an LLM or embedded rolling summary
 * from the manager, pinned items protected and tool pairs kept whole.
 *
 * - `getItems(limit)` returns the compacted view (pinned items, the summary, the recent items),
 *   compacting first when the history crosses the trigger; `limit` is boundary-aware.
 * - `runCompaction()` is the SDK's compaction hook: the runner calls it after each completed turn
 *   has been persisted, and the session compacts when the trigger is reached (or on `force`).
 * - The underlying session's raw history is never rewritten unless `writeTimeCompaction` is on.
 * - Compactions are recorded as `agent.compaction` custom spans under the run's trace.
 *
 * @example
 * ```ts
 * import { Agent, MemorySession, run } from '@openai/agents';
 * import { CompactManager } from 'agent-compaction';
 * import { CompactionSession } from 'agent-compaction/openai-agents';
 *
 * const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 128_000 });
 * const session = new CompactionSession({ session: new MemorySession(), manager });
 * await run(agent, 'Hello', session.runOptions()); // the session and its input filter
 * ```
 */
export class CompactionSession implements OpenAIResponsesCompactionAwareSession {
  /** The wrapped session, holding the raw history. */
  readonly underlying: Session;
  /** The manager. */
  readonly manager: CompactManager;
  readonly #options: CompactionSessionOptions;
  #sessionId: Promise<string> | undefined;
  #last: CompactionResult<AgentInputItem> | undefined;
  #filterCallsSeen = filterCallCount();
  #warned = false;

  constructor(options: CompactionSessionOptions) {
    if (!options?.session || typeof options.session.getItems !== 'function') {
      throw new CompactError('invalid_config', 'CompactionSession: session must be an Agents SDK Session');
    }
    if (!options.manager || typeof options.manager.compact !== 'function') {
      throw new CompactError('invalid_config', 'CompactionSession: manager must be a CompactManager');
    }
    const { session: _session, manager, ...rest } = options;
    checkAdapterOptions('CompactionSession', manager, rest, SESSION_OPTIONS);
    this.underlying = options.session;
    this.manager = options.manager;
    this.#options = { ...options };
  }

  /** The manager's session id (the option, or the underlying session's id). */
  compactionSessionId(): Promise<string> {
    this.#sessionId ??= this.#options.sessionId
      ? Promise.resolve(this.#options.sessionId)
      : this.underlying.getSessionId();
    return this.#sessionId;
  }

  /** The result of the last compaction check (read or hook), for status displays. */
  get lastResult(): CompactionResult<AgentInputItem> | undefined {
    return this.#last;
  }

  /**
   * A `callModelInputFilter` bound to this session's id: compacts every model call exactly,
   * with the agent's real instructions and tool schemas, including the items of the turn in
   * progress.
   */
  inputFilter<TContext = unknown>(): CallModelInputFilter<TContext> {
    return compactionInputFilter<TContext>(this.manager, {
      sessionId: () => this.compactionSessionId(),
    });
  }

  /**
   * The options that keep every model call of a run inside the window: this session and its
   * input filter. `run(agent, input, session.runOptions())`.
   */
  runOptions<TContext = unknown>(): {
    session: CompactionSession;
    callModelInputFilter: CallModelInputFilter<TContext>;
  } {
    return { session: this, callModelInputFilter: this.inputFilter<TContext>() };
  }

  async getSessionId(): Promise<string> {
    return this.underlying.getSessionId();
  }

  /** The compacted view of the history (most recent `limit` items, boundary-aware). */
  async getItems(limit?: number): Promise<AgentInputItem[]> {
    const raw = await this.underlying.getItems();
    const open = openRoundStart(raw);
    if (open === 0) return boundaryAwareTail(raw, limit);
    const result = await this.#compact(raw.slice(0, open), false);
    return boundaryAwareTail([...result.messages, ...raw.slice(open)], limit);
  }

  /** The full, uncompacted history of the underlying session. */
  getRawItems(limit?: number): Promise<AgentInputItem[]> {
    return this.underlying.getItems(limit);
  }

  async addItems(items: AgentInputItem[]): Promise<void> {
    await this.underlying.addItems(items);
  }

  async popItem(): Promise<AgentInputItem | undefined> {
    return this.underlying.popItem();
  }

  /** Clears the underlying session and forgets the manager's summary of it. */
  async clearSession(): Promise<void> {
    await this.underlying.clearSession();
    await this.manager.reset(await this.compactionSessionId());
    this.#last = undefined;
  }

  /**
   * The SDK's compaction hook, called by the runner after each persisted turn: compacts when the
   * history crosses the trigger, or unconditionally with `force: true`. Returns the summarizer's model usage
   * (added to the run's usage), or `null` when nothing was compacted or no model was called.
   */
  async runCompaction(args?: OpenAIResponsesCompactionArgs): Promise<OpenAIResponsesCompactionResult | null> {
    this.#warnWithoutFilter();
    const raw = await this.underlying.getItems();
    const open = openRoundStart(raw);
    if (open === 0) return null;
    const { result, usage } = await this.#compactTraced(raw.slice(0, open), args?.force === true);
    const view = [...result.messages, ...raw.slice(open)];
    // With write-time compaction, persist the view whenever it differs from the stored history
    // (an input filter may have compacted during the turn, before this hook ran).
    const differs = view.length !== raw.length || view.some((item, k) => item !== raw[k]);
    if (this.#options.writeTimeCompaction && differs) {
      await this.underlying.clearSession();
      try {
        await this.underlying.addItems(view);
      } catch (error) {
        // Never lose the history to a failed rewrite: put the raw items back.
        await this.underlying.clearSession();
        await this.underlying.addItems(raw);
        throw error;
      }
    }
    if (!result.applied || !usage) return null;
    const { RequestUsage } = await loadAgents();
    return {
      usage: new RequestUsage({
        inputTokens: usage.inputTokens,
        outputTokens: usage.outputTokens,
        totalTokens: usage.inputTokens + usage.outputTokens,
      }),
    };
  }

  /**
   * The runner hands the model its own in-memory items during a run, not the session's view:
   * without an input filter, one long run can exceed the window. Said once per session.
   */
  #warnWithoutFilter(): void {
    const calls = filterCallCount();
    const filtered = calls !== this.#filterCallsSeen;
    this.#filterCallsSeen = calls;
    if (filtered || this.#warned) return;
    this.#warned = true;
    console.warn(
      '[agent-compaction] CompactionSession without its input filter compacts between runs only: the model calls of one long run can exceed the window. Run with session.runOptions() (or pass callModelInputFilter: session.inputFilter()).',
    );
  }

  async #compact(raw: AgentInputItem[], force: boolean): Promise<CompactionResult<AgentInputItem>> {
    return (await this.#compactTraced(raw, force)).result;
  }

  async #compactTraced(
    raw: AgentInputItem[],
    force: boolean,
  ): Promise<{
    result: CompactionResult<AgentInputItem>;
    usage?: { inputTokens: number; outputTokens: number };
  }> {
    const sessionId = await this.compactionSessionId();
    const { instructions, tools } = this.#options;
    return withCompactionSpan('agent.compaction', async (placement) => {
      const { result, events } = await compactWithEvents(this.manager, sessionId, raw, {
        format: 'openai-responses',
        ...(force ? { force: true, note: 'runCompaction(force)' } : {}),
        ...(instructions ? { system: instructions } : {}),
        ...(tools ? { tools } : {}),
        ...placement,
      });
      this.#last = result;
      if (result.summary) registerSessionSummary(this.manager, result.summary.text, sessionId);
      const usage = summaryEventOf(events)?.properties.usage;
      return {
        value: usage ? { result, usage } : { result },
        data: describeCompaction(sessionId, result, events),
      };
    });
  }
}
