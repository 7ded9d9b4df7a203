/**
 * What the pipeline of every call needs from its manager (see preflight/prepare-request.ts's
 * `PipelineDeps`), built once per manager from its options and resolved settings.
 */

import { SessionArchive } from '../archive/session-archive.js';
import type { CachePrice } from '../counting/session-cost.js';
import type { TokenCounter } from '../counting/token-counter.js';
import { UsageCalibration } from '../counting/usage-calibration.js';
import type { EventBus } from '../events/event-bus.js';
import type { MessageIndex } from '../messages/message-index.js';
import { IndexedHistories, type IndexedHistory } from '../preflight/index/index-request.js';
import { PersistedCounts } from '../preflight/index/persist-counts.js';
import type { PipelineDeps } from '../preflight/prepare-request.js';
import { RewriteCache } from '../preflight/view/realize-rewrite.js';
import type { SessionStore } from '../session/session-store.js';
import type { Summarizer } from '../summary/summarizer.js';
import { SummaryMarks } from '../summary/summary-mark.js';
import type { CompactManagerOptions } from './manager-options.js';
import type { ManagerSettings } from './resolve-settings.js';

/** The parts the manager made itself, which the pipeline shares. */
export interface PipelineParts {
  readonly counter: TokenCounter;
  readonly model: string;
  /** The store the calls use (behind fail-open unless told otherwise). */
  readonly store: SessionStore;
  readonly bus: EventBus;
  readonly index: MessageIndex;
  readonly summarizer: Summarizer;
  readonly embedded: Summarizer;
  readonly cachePrice: CachePrice;
  /** Hears of each session whose indexed history the caps dropped. */
  readonly onEvict: (key: string, history: IndexedHistory) => void;
}

/** The pipeline's dependencies for a manager of `options`. */
export function pipelineDeps(
  options: CompactManagerOptions,
  settings: ManagerSettings,
  parts: PipelineParts,
): PipelineDeps {
  const { summarizer, embedded } = parts;
  return {
    calibration: new UsageCalibration(),
    counter: parts.counter,
    model: parts.model,
    store: parts.store,
    bus: parts.bus,
    archive: new SessionArchive(options.storage, settings.redact, parts.bus, settings.archiveTimeoutMs),
    index: parts.index,
    histories: new IndexedHistories(undefined, settings.cacheMaxBytes, parts.onEvict),
    rewrites: new RewriteCache(),
    toolCounts: new WeakMap(),
    systemCounts: new Map(),
    chain: summarizer === embedded ? [embedded] : [summarizer, embedded],
    summarizerTimeoutMs: settings.summarizerTimeoutMs,
    summarizerRedact: options.redactSummarizerInput === false ? undefined : settings.redact,
    requireArchive: settings.requireArchive,
    clock: options.clock ?? Date.now,
    lastCalls: new Map(),
    cachePrice: parts.cachePrice,
    marks: new SummaryMarks(options.summaryKeys),
    fallbackStreaks: new Map(),
    counts: new PersistedCounts(parts.store, parts.counter, parts.model),
  };
}
