/**
 * The events of a compaction that landed: `compact.reduction` per level and
 * `compact.pruned_messages` (what was kept and pruned, and the cache impact when priced).
 */
import type { SessionState } from '../../session/session-store.js';
import type { LevelReport } from '../cascade/cascade-types.js';
import type { PipelineDeps, PreparedRequest } from '../prepare-request.js';
import type { CascadeResult } from '../run-cascade.js';
import { compactionCacheImpact } from './cache-impact.js';
import type { keptCounts } from './untriggered-result.js';

/** True when events reach someone: a listener, an exporter or the archive (otherwise they are not built). */
export function observed(deps: PipelineDeps): boolean {
  return deps.bus.observed || deps.archive.storage !== undefined;
}

/** The `compact.reduction` and `compact.pruned_messages` events of a compaction that landed. */
export function emitOutcome(
  deps: PipelineDeps,
  prepared: PreparedRequest,
  cascade: CascadeResult,
  state: SessionState,
  kept: ReturnType<typeof keptCounts>,
  summaryWire: unknown,
): void {
  const { context } = prepared;
  const parentId = prepared.decisionSpanId;
  const start = Date.now();
  for (const level of cascade.levels) emitLevel(deps, prepared, level, state.version);
  deps.bus.emit(
    context,
    'compact.pruned_messages',
    {
      prunedCount: cascade.folded.length,
      prunedIds: cascade.folded.map((item) => item.id),
      kept,
      tokensBefore: prepared.tokensBefore,
      tokensAfter: Math.ceil(cascade.tokensAfter * prepared.scale),
      version: state.version,
      pinnedLabels: cascade.entries
        .filter((e) => e.pinned && e.item.entry.parsed.meta?.label)
        .map((e) => String(e.item.entry.parsed.meta!.label)),
      ...(deps.cachePrice
        ? { cache: compactionCacheImpact(deps.cachePrice, prepared, cascade, summaryWire) }
        : {}),
    },
    { start, ...(parentId ? { parentId } : {}) },
  );
}

function emitLevel(deps: PipelineDeps, prepared: PreparedRequest, level: LevelReport, version: number): void {
  deps.bus.emit(
    prepared.context,
    'compact.reduction',
    {
      level: level.level,
      count: level.count,
      tokensSaved: level.tokensSaved,
      refs: level.refs,
      version,
      ...(level.gaveWay === undefined ? {} : { gaveWay: level.gaveWay }),
      ...(level.summaryLinesGivenUp === undefined ? {} : { summaryLinesGivenUp: level.summaryLinesGivenUp }),
    },
    { start: Date.now(), ...(prepared.decisionSpanId ? { parentId: prepared.decisionSpanId } : {}) },
  );
}
