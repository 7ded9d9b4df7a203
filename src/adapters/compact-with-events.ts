import { AsyncLocalStorage } from 'node:async_hooks';
import type { AnyCompactEvent, CompactEvent } from '../core/events/events.js';
import type { CompactManager } from '../core/manager/compact-manager.js';
import type { CompactionResult, CompactOptions } from '../core/manager/manager-options.js';

const capture = new AsyncLocalStorage<AnyCompactEvent[]>();
const subscribed = new WeakSet<CompactManager>();

/** A compaction's result with the events it emitted (already redacted by the manager). */
export interface CompactWithEventsResult<M> {
  result: CompactionResult<M>;
  events: AnyCompactEvent[];
}

/**
 * Runs `manager.compact` and collects the events this call emitted, even when other sessions
 * compact concurrently (the manager emits in the caller's async context, which an
 * `AsyncLocalStorage` tells apart).
 */
export async function compactWithEvents<M>(
  manager: CompactManager,
  sessionId: string,
  messages: readonly M[],
  options: CompactOptions = {},
): Promise<CompactWithEventsResult<M>> {
  if (!subscribed.has(manager)) {
    subscribed.add(manager);
    manager.on('*', (event) => capture.getStore()?.push(event as AnyCompactEvent));
  }
  const events: AnyCompactEvent[] = [];
  const result = await capture.run(events, () => manager.compact<M>(sessionId, messages, options));
  return { result, events };
}

/** The `compact.summary_created` event among `events`, if the call created a summary. */
export function summaryEventOf(
  events: readonly AnyCompactEvent[],
): CompactEvent<'compact.summary_created'> | undefined {
  return events.find(
    (event): event is CompactEvent<'compact.summary_created'> => event.name === 'compact.summary_created',
  );
}

/** A flat, JSON-friendly description of a compaction, for SDK spans and logs. */
export function describeCompaction(
  sessionId: string,
  result: CompactionResult<unknown>,
  events: readonly AnyCompactEvent[],
): Record<string, unknown> {
  const summary = summaryEventOf(events);
  const errors = events.filter((event) => event.name === 'compact.error');
  return {
    'compaction.session_id': sessionId,
    'compaction.applied': result.applied,
    'compaction.reason': result.reason,
    'compaction.tokens_before': result.tokensBefore,
    'compaction.tokens_after': result.tokensAfter,
    'compaction.budget': result.budget,
    'compaction.pruned_count': result.prunedCount,
    'compaction.version': result.version,
    ...(summary
      ? {
          'compaction.summarizer': summary.properties.summarizer,
          'compaction.summary_tokens': summary.properties.summaryTokens,
          output_text: summary.properties.summary,
        }
      : {}),
    ...(errors.length > 0
      ? {
          'compaction.errors': errors.map(
            (event) => `${event.properties.errorType}: ${event.properties.message}`,
          ),
        }
      : {}),
  };
}
