/**
 * Steps 5 to 7 of a triggered preflight: archive the transcript, run the cascade, archive
 * the originals of what it cleared, shortened, cut or summarized, store the new state (a
 * compare-and-set), then emit the events and assemble the request. The untriggered answer
 * is in untriggered-result.ts, the archived originals in archive-originals.ts.
 */
import { CompactError, isCompactError } from '../errors.js';
import type { EventTiming } from '../events/event-bus.js';
import type { CompactEventProperties } from '../events/events.js';
import type { CompactionResult } from '../manager/manager-options.js';
import { QUEUE_SUMMARIZER_PREFIX } from '../queues/preparation-queue.js';
import type { SessionState } from '../session/session-store.js';
import type { PreparedSummary } from './cascade/prepared-summary.js';
import { checkSummaryOutput } from './cascade/summary-output.js';
import { swapPrepared } from './cascade/swap-prepared.js';
import { requestShowsAssistant } from './index/request-shows-assistant.js';
import { between, inSteps } from './outcome/after-cascade-turns.js';
import { artifactsOf } from './outcome/archive-originals.js';
import { archiveLine, dropArchiveLine, pruningBlocked, unnameRefs } from './outcome/archive-summary.js';
import { assemble } from './outcome/assemble.js';
import {
  freesTooLittle,
  noteFallbackStreak,
  overTarget,
  spendsTriggerReserve,
} from './outcome/compaction-notes.js';
import { emitOutcome, observed } from './outcome/compaction-outcome.js';
import { emitContended, localize } from './outcome/local-answer.js';
import { nextStateSteps } from './outcome/next-state.js';
import { guardSteps, newestFault, reportUnsound, withNewestAsGiven } from './outcome/request-guard.js';
import { storeCompaction } from './outcome/store-compaction.js';
import { keptCountsSteps } from './outcome/untriggered-result.js';
import { type PipelineDeps, type PreparedRequest, summaryText } from './prepare-request.js';
import { type CascadeInput, type CascadeResult, runCascade, summaryMessageTokens } from './run-cascade.js';
import type { ViewEntry } from './view/session-view.js';
import { viewAfterCompactionSteps } from './view/view-after-compaction.js';

/** A compaction that landed in the store. */
export interface Compacted {
  cascade: CascadeResult;
  state: SessionState;
  /**
   * True when the compaction answers this call only and was not stored (the store kept
   * changing under it): no summary archive record, no view kept for the next call.
   */
  local?: boolean;
}

/** What a triggered run may bring besides the request. */
export interface TriggeredExtras {
  /** A summary prepared in the background, swapped in when it still fits the view. */
  readonly prepared?: PreparedSummary;
  /** The token of the session lock held for this run: the state is written fenced by it. */
  readonly fencingToken?: number;
  /**
   * Answer this call without writing the store (it kept changing under every reload): one
   * `compact.error` (`concurrent_compaction`, fallback `local`) says so.
   */
  readonly local?: {
    readonly reloads: number;
    /** The store is down (reported once, by the outage's own event): no event per call. */
    readonly outage?: boolean;
  };
}

/** The cascade's input for a triggered request. */
function cascadeInput(
  deps: PipelineDeps,
  prepared: PreparedRequest,
  timing: (start: number) => EventTiming,
  local: boolean,
): CascadeInput {
  const { context, view, options, indexed, codec } = prepared;
  return {
    sessionId: context.sessionId,
    view,
    pairing: { pairer: indexed.pairer, items: indexed.items },
    policy: prepared.policy,
    decision: prepared.localDecision,
    tokensBefore: prepared.localTokensBefore,
    ...(view.version > 0 ? { summaryWire: prepared.summaryWire } : {}),
    summaryTokens: prepared.summaryTokens,
    force: options.force === true,
    codec,
    counter: deps.counter,
    realize: (item, rewrite) =>
      deps.rewrites.get(
        {
          codec,
          counter: deps.counter,
          pairer: indexed.pairer,
          items: indexed.items,
          archived: deps.archive.keepsArtifacts,
        },
        item,
        rewrite,
      ),
    summarize: {
      chain: deps.chain,
      timeoutMs: deps.summarizerTimeoutMs,
      counter: deps.counter,
      redact: deps.summarizerRedact,
      emit: (name, properties, start) => deps.bus.emit(context, name, properties, timing(start)),
    },
    checkSummary: checkSummaryOutput,
    formatSummary: (version, body) => summaryText(deps, prepared.key, version, body, local),
    // A local summary names no `sum-vN`: that version is not its to archive.
    ...(deps.archive.keepsArtifacts && !local
      ? { archiveLine: (version: number) => archiveLine(version) }
      : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.note ? { note: options.note } : {}),
    ...(options.agent ? { agent: options.agent } : {}),
    ...(requestShowsAssistant(indexed, options) ? { withAssistant: true } : {}),
  };
}

/** The prepared summary swapped in, its events emitted; `undefined` when it does not fit. */
function trySwap(
  deps: PipelineDeps,
  prepared: PreparedRequest,
  input: CascadeInput,
  summary: PreparedSummary | undefined,
  timing: (start: number) => EventTiming,
): CascadeResult | undefined {
  if (!summary || input.force) return undefined;
  const swapped = swapPrepared(input, summary);
  if (swapped && observed(deps)) {
    for (const event of summary.events)
      deps.bus.emit(prepared.context, event.name, event.properties as never, timing(event.start));
    if (swapped.summary && summary.outcome.summarizer.startsWith(QUEUE_SUMMARIZER_PREFIX))
      deps.bus.emit(
        prepared.context,
        'compact.summary_created',
        queuedSummaryEvent(input, swapped),
        timing(Date.now()),
      );
  }
  return swapped;
}

/**
 * The `compact.summary_created` of a summary a queue worker prepared (the worker's own event
 * went to its exporters): so that this session's trace, report and status name it too.
 */
function queuedSummaryEvent(
  input: CascadeInput,
  swapped: CascadeResult,
): CompactEventProperties['compact.summary_created'] {
  const summary = swapped.summary!;
  const folded = new Set(swapped.folded.map((item) => item.id));
  const inputTokens = input.view.entries.reduce((sum, e) => sum + (folded.has(e.item.id) ? e.tokens : 0), 0);
  return {
    strategy: String(input.policy.strategy),
    summarizer: summary.summarizer,
    inputMessages: folded.size,
    inputTokens,
    summaryTokens: summary.tokens,
    compressionRatio: inputTokens > 0 ? summary.tokens / inputTokens : 1,
    version: summary.version,
    // Prepared off this process: no time of this call went into it.
    latencyMs: 0,
    summary: summary.body,
  };
}

/**
 * Archive, cascade (or swap in a prepared summary), archive the originals, store. `'retry'`
 * when another process compacted first.
 */
export async function runTriggered(
  deps: PipelineDeps,
  prepared: PreparedRequest,
  extras: TriggeredExtras = {},
): Promise<Compacted | 'retry' | 'declined'> {
  const { context, view, options } = prepared;
  const parentId = prepared.decisionSpanId;
  const timing = (start: number) => ({ start, ...(parentId ? { parentId } : {}) });
  context.archived ??= [];
  throwIfAborted(options.signal);
  // The store kept changing: the newest stored view is sent as it is when it fits the budget
  // (no text of a version this process does not own), else a compaction that is not stored.
  if (extras.local && !options.force && prepared.tokensBefore <= prepared.decision.budget) {
    if (!extras.local.outage) emitContended(deps, prepared, 'stored-view', extras.local.reloads, timing);
    return 'declined';
  }
  const input = cascadeInput(deps, prepared, timing, extras.local !== undefined);
  const cascade = await cascadeOrReport(deps, prepared, input, extras.prepared, timing);
  if (freesTooLittle(prepared, cascade) || spendsTriggerReserve(deps, prepared, cascade)) return 'declined';
  // Archived before anything is pruned (the state is written last), and only when it will be.
  const archived = await deps.archive.transcript(context, prepared.messages, view.nextVersion, parentId);
  if (!archived && deps.requireArchive) throw pruningBlocked(deps);
  const version = cascade.summary?.version ?? view.version;
  throwIfAborted(options.signal);
  if (deps.archive.keepsArtifacts) await archiveArtifacts(deps, prepared, input, cascade, version, extras);
  await between(cascade);
  const state = await inSteps(cascade, nextStateSteps(prepared, cascade));
  await between(cascade);
  throwIfAborted(options.signal);
  if (extras.local) {
    if (!extras.local.outage) emitContended(deps, prepared, 'local', extras.local.reloads, timing);
    localize(deps, prepared, cascade, state);
    return { cascade, state, local: true };
  }
  const stored = await storeCompaction(deps, prepared, cascade, state, {
    fencingToken: extras.fencingToken,
    version,
    timing,
  });
  if (stored === 'retry') return 'retry';
  return stored === 'local' ? { cascade, state, local: true } : { cascade, state };
}

/** The cascade's result (or the prepared summary swapped in); a budget it cannot meet is reported. */
async function cascadeOrReport(
  deps: PipelineDeps,
  prepared: PreparedRequest,
  input: CascadeInput,
  preparedSummary: PreparedSummary | undefined,
  timing: (start: number) => EventTiming,
): Promise<CascadeResult> {
  try {
    return trySwap(deps, prepared, input, preparedSummary, timing) ?? (await runCascade(input));
  } catch (error) {
    if (isCompactError(error, 'insufficient_budget')) {
      deps.bus.emit(
        prepared.context,
        'compact.error',
        { errorType: 'insufficient_budget', message: error.message, fallback: 'none' },
        timing(Date.now()),
      );
      deps.archive.trackEvents(prepared.context);
    }
    throw error;
  }
}

/** Archives the originals the cascade rewrote; what was not written is not named. */
async function archiveArtifacts(
  deps: PipelineDeps,
  prepared: PreparedRequest,
  input: CascadeInput,
  cascade: CascadeResult,
  version: number,
  extras: TriggeredExtras,
): Promise<void> {
  const artifacts = artifactsOf(cascade, version, input.pairing.items).filter(
    (artifact) => !(extras.local && artifact.kind === 'summarized'),
  );
  const written = await deps.archive.artifacts(prepared.context, artifacts, prepared.decisionSpanId);
  if (deps.requireArchive && written.size < artifacts.length) throw pruningBlocked(deps);
  // A summary or placeholder names its archive ref only when that original was written.
  if (!written.has(`sum-v${version}`)) dropArchiveLine(deps, prepared, cascade, version);
  const unwritten = new Set(artifacts.map((artifact) => artifact.ref).filter((ref) => !written.has(ref)));
  if (unwritten.size > 0) unnameRefs(input, cascade, unwritten);
}

/** Events and the result of a compaction that landed. */
export async function finishCompaction<M>(
  deps: PipelineDeps,
  prepared: PreparedRequest,
  { cascade, state, local }: Compacted,
): Promise<CompactionResult<M>> {
  const { context, codec, view } = prepared;
  // After the state's write (its JSON round trip in a memory store).
  await between(cascade);
  deps.calibration.noteSent(prepared.key, cascade.tokensAfter);
  const kept = await inSteps(cascade, keptCountsSteps(cascade.entries));
  await between(cascade);
  if (prepared.decisionEvent)
    Object.assign(prepared.decisionEvent.properties, {
      kept,
      prunedCount: cascade.folded.length,
      ...overTarget(prepared, cascade),
    });
  deps.bus.release(context);
  const summary = cascade.summary;
  const text = state.summary
    ? summaryText(deps, prepared.key, state.version, state.summary.text, state.local)
    : undefined;
  const summaryWire = text === undefined ? undefined : codec.summaryMessage(text);
  if (observed(deps)) emitOutcome(deps, prepared, cascade, state, kept, summaryWire);
  noteFallbackStreak(deps, prepared, cascade);
  deps.archive.trackEvents(context);
  void deps.bus.flush();
  await between(cascade);
  const result: CompactionResult<M> = {
    messages: assemble(cascade.entries, summaryWire, codec.format) as M[],
    applied: true,
    reason: prepared.decision.reason,
    tokensBefore: prepared.tokensBefore,
    tokensAfter: Math.ceil(cascade.tokensAfter * prepared.scale),
    budget: prepared.decision.budget,
    kept,
    prunedCount: cascade.folded.length,
    version: state.version,
    format: codec.format,
    levels: cascade.levels,
    repairs: prepared.repairs,
  };
  if (text !== undefined) {
    result.summary = {
      text,
      version: state.version,
      tokens: summary?.tokens ?? prepared.summaryTokens,
      summarizer: summary?.summarizer ?? state.summary?.summarizer ?? 'unknown',
      ...(summary?.fallback ? { fallback: summary.fallback } : {}),
      ...(state.local ? { local: true as const } : {}),
    };
  }
  await between(cascade);
  await guardCompacted(deps, prepared, cascade, summaryWire, result);
  await between(cascade);
  // The next call extends the view this compaction made (O(what changed), not O(history));
  // after a local answer it resumes the stored state instead.
  if (!local) {
    const steps = viewAfterCompactionSteps(prepared, cascade, state, {
      summaryWire,
      summaryText: text,
      codec,
      counter: deps.counter,
      summaryTokens: (summary) => summaryMessageTokens(codec, deps.counter, summary),
    });
    prepared.indexed.view = (await inSteps(cascade, steps)) ?? prepared.indexed.view;
  }
  void view;
  return result;
}

/**
 * The last guard on a compacted request (request-guard.ts): a newest message the cascade
 * rewrote goes as given; a request whose pairing or summaries broke is replaced by the given
 * history. Either way one `compact.error` (`unsound_request`) says what broke and where.
 */
async function guardCompacted<M>(
  deps: PipelineDeps,
  prepared: PreparedRequest,
  cascade: CascadeResult,
  summaryWire: unknown,
  result: CompactionResult<M>,
): Promise<void> {
  // A cut newest message is level d's last resort only when the request cannot hold it whole.
  const oversized = (entry: ViewEntry) =>
    cascade.tokensAfter - entry.tokens + entry.originalTokens > prepared.localDecision.limit;
  const newest = newestFault(result.messages, prepared, cascade.entries, oversized);
  const fault =
    newest ??
    (await inSteps(
      cascade,
      guardSteps(
        cascade.entries,
        summaryWire,
        cascade.folded,
        prepared.codec.format,
        prepared.view.summaryItem,
      ),
    ));
  if (!fault) return;
  const repaired =
    fault.rule === 'newest_message'
      ? withNewestAsGiven(result.messages, prepared, cascade.entries)
      : undefined;
  if (repaired) {
    reportUnsound(deps, prepared, fault, 'rewrite_dropped');
    result.messages = repaired as M[];
    const last = cascade.entries.at(-1)!;
    result.tokensAfter += Math.ceil((last.originalTokens - last.tokens) * prepared.scale);
    return;
  }
  reportUnsound(deps, prepared, fault, 'given_history');
  result.messages = prepared.indexed.items.map((item) => item.entry.wire) as M[];
  result.tokensAfter = result.tokensBefore;
  delete result.summary;
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted)
    throw new CompactError('aborted', 'compaction aborted by the caller', { cause: signal.reason });
}
