import { clock } from '../../core/clock.js';
import { type ModeledCache, PrefixCacheTally } from '../../core/counting/prefix-cache.js';
import { cachePriceFor } from '../../core/counting/session-cost.js';
import type { AnyCompactEvent } from '../../core/events/events.js';
import { CompactManager } from '../../core/manager/compact-manager.js';
import type { CompactManagerOptions, CompactOptions } from '../../core/manager/manager-options.js';
import { buildTraceModel, type TraceModel } from '../../report/trace-model.js';
import { type CliInput, countedTools } from '../read-input.js';
import { callPoints } from './call-points.js';

/** Options of {@link replayTranscript}. */
export interface ReplayOptions {
  /** The manager's options (window, model, policy, storage, exporters). */
  manager: CompactManagerOptions;
  /** @default 'replay' */
  sessionId?: string;
  /** Called after every call with the calls done so far and the compactions seen. */
  onProgress?: (done: number, total: number, compactions: number) => void;
  /** Passed to every call (tools, system, format). */
  callOptions?: CompactOptions;
}

/** What a replay saw. */
export interface ReplayResult {
  trace: TraceModel;
  /** The (redacted) events, in order. */
  events: AnyCompactEvent[];
  model: string;
  maxContextTokens: number;
  triggerTokens: number;
  budget: number;
  messages: number;
  elapsedMs: number;
  /** The prompt cache the requests would have had, modeled (see `PrefixCacheTally`). */
  cache: ModeledCache;
}

/**
 * Runs a recorded transcript through a {@link CompactManager} as if live: one call at each
 * point where the model speaks next (see `callPoints`), each seeing only the history up to
 * it. Events are collected as the manager emits them (redacted).
 */
export async function replayTranscript(input: CliInput, options: ReplayOptions): Promise<ReplayResult> {
  const sessionId = options.sessionId ?? 'replay';
  const manager = new CompactManager(options.manager);
  const events: AnyCompactEvent[] = [];
  let compactions = 0;
  const off = manager.on('*', (event) => {
    events.push(event as AnyCompactEvent);
    if (event.name === 'compact.trigger_decision' && (event.properties as { triggered?: boolean }).triggered)
      compactions++;
  });
  const points = callPoints(input.messages);
  const callOptions: CompactOptions = {
    ...countedTools(input),
    ...(input.system !== undefined ? { system: input.system } : {}),
    ...options.callOptions,
  };
  const overhead = manager.estimate([], callOptions).total;
  const cache = new PrefixCacheTally(
    cachePriceFor(manager.model, options.manager.pricing),
    (message) => manager.estimate([message], callOptions).total - overhead,
  );
  const started = clock.now();
  try {
    for (const [done, end] of points.entries()) {
      const result = await manager.compact(sessionId, input.messages.slice(0, end), callOptions);
      cache.add(result.messages);
      options.onProgress?.(done + 1, points.length, compactions);
    }
  } finally {
    off();
    // Archive writes and exporters (the trace file) finish before the result is read.
    await manager.shutdown();
  }
  return {
    trace: buildTraceModel(events),
    events,
    model: manager.model,
    maxContextTokens: manager.maxContextTokens,
    triggerTokens: manager.triggerTokens,
    budget: manager.budget,
    messages: input.messages.length,
    elapsedMs: clock.now() - started,
    cache: cache.totals(),
  };
}
