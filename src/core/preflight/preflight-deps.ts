/**
 * What every step of a preflight reads: the pipeline's parts (built once per manager,
 * manager/pipeline-deps.ts) and one call's input, with the helpers the steps share.
 */

import type { SessionArchive } from '../archive/session-archive.js';
import type { CachePrice } from '../counting/session-cost.js';
import type { TokenCounter } from '../counting/token-counter.js';
import type { UsageCalibration } from '../counting/usage-calibration.js';
import { invalidConfig } from '../errors.js';
import type { EventBus, OperationContext } from '../events/event-bus.js';
import type { CompactOptions } from '../manager/manager-options.js';
import type { MessageCodec } from '../messages/formats/message-codec.js';
import { formatLocalSummaryText } from '../messages/message.js';
import type { MessageIndex } from '../messages/message-index.js';
import type { CompactPolicy } from '../policy.js';
import type { Redactor } from '../redaction/redactor.js';
import type { SessionStore } from '../session/session-store.js';
import type { Summarizer } from '../summary/summarizer.js';
import type { SummaryMarks } from '../summary/summary-mark.js';
import type { IndexedHistories } from './index/index-request.js';
import type { PersistedCounts } from './index/persist-counts.js';
import type { RewriteCache } from './view/realize-rewrite.js';

/** What the pipeline needs from the manager (built once per manager). */
export interface PipelineDeps {
  /** Per-session calibration from reported usage. */
  readonly calibration: UsageCalibration;
  readonly counter: TokenCounter;
  readonly model: string;
  readonly store: SessionStore;
  readonly bus: EventBus;
  readonly archive: SessionArchive;
  readonly index: MessageIndex;
  readonly histories: IndexedHistories;
  readonly rewrites: RewriteCache;
  /** The configured summarizer, then the embedded fallback. */
  readonly chain: readonly Summarizer[];
  readonly summarizerTimeoutMs: number;
  /** Redacts summarizer input and output (undefined when the user opted out). */
  readonly summarizerRedact: Redactor | undefined;
  readonly toolCounts: WeakMap<readonly unknown[], number>;
  readonly systemCounts: Map<string, number>;
  /** Stop a compaction (nothing pruned, `storage_failed` thrown) when its archive cannot be written. */
  readonly requireArchive?: boolean;
  readonly clock: () => number; // epoch ms, injectable for tests
  /** Each key's last call (an idle gap compacts early) and how many calls it made (the events' `callNumber`). */
  readonly lastCalls: Map<string, { at: number; count: number }>;
  /** Prices a compaction's effect on the prompt cache (its `compact.pruned_messages` event). */
  readonly cachePrice?: CachePrice;
  /** Signs the summaries written and verifies those handed back. */
  readonly marks: SummaryMarks;
  /** Per session, compactions in a row written by a fallback summarizer (see run-preflight.ts). */
  readonly fallbackStreaks: Map<string, number>;
  /** The sessions' token counts kept with their state (read on a first call, written after calls). */
  readonly counts: PersistedCounts;
}

/**
 * The summary message text of `body` at `version` for the session `key`, marked; a local
 * summary (`SessionState.local`: the store could not take it) claims no version and carries
 * no mark.
 */
export function summaryText(
  deps: Pick<PipelineDeps, 'marks'>,
  key: string,
  version: number,
  body: string,
  local?: boolean,
): string {
  return local === true ? formatLocalSummaryText(body) : deps.marks.format(key, version, body);
}

/** One call's input. */
export interface PreflightInput {
  readonly context: OperationContext;
  /**
   * Where the session's state lives: the session id, or the session id and the agent for an
   * agent with its own compactor (see `CompactManagerOptions.agents`).
   */
  readonly key: string;
  readonly messages: readonly unknown[];
  readonly codec: MessageCodec;
  readonly policy: Readonly<CompactPolicy>;
  readonly options: CompactOptions;
  readonly maxContextTokens: number;
}

/** System prompt and tool schemas, each counted once per distinct value. */
export function fixedTokens(
  deps: PipelineDeps,
  options: Pick<CompactOptions, 'system' | 'tools'>,
): { system: number; toolsSchema: number } {
  let system = 0;
  if (options.system !== undefined) {
    const text = typeof options.system === 'string' ? options.system : JSON.stringify(options.system);
    const cached = deps.systemCounts.get(text);
    system = cached ?? deps.counter.countText(text) + 4;
    if (cached === undefined) {
      if (deps.systemCounts.size > 256) deps.systemCounts.clear();
      deps.systemCounts.set(text, system);
    }
  }
  let toolsSchema = 0;
  const tools = options.tools;
  if (tools && tools.length > 0) {
    if (!Array.isArray(tools)) throw invalidConfig('tools', 'must be an array of tool schemas');
    const cached = deps.toolCounts.get(tools);
    toolsSchema = cached ?? deps.counter.countTools(tools);
    if (cached === undefined) deps.toolCounts.set(tools, toolsSchema);
  }
  return { system, toolsSchema };
}

/** Forgets what the pipeline keeps about a session. */
export function forgetSession(deps: PipelineDeps, sessionId: string): void {
  deps.histories.delete(sessionId);
  deps.histories.delete(`${sessionId}\u0000repaired`);
  deps.calibration.forget(sessionId);
  deps.lastCalls.delete(sessionId);
  deps.fallbackStreaks.delete(sessionId);
  deps.marks.forget(sessionId);
}
