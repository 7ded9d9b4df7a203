/**
 * The last step of a triggered run that writes: the summary archived, then the new state
 * stored with a compare-and-set on the version the run read (fenced by the session lock's
 * token when one is held). A store that went down answers the call locally; another
 * compaction that landed first makes the run retry.
 */
import type { EventTiming } from '../../events/event-bus.js';
import type { SessionState } from '../../session/session-store.js';
import { FailOpenStore } from '../../store/fail-open-store.js';
import type { PipelineDeps, PreparedRequest } from '../prepare-request.js';
import type { CascadeResult } from '../run-cascade.js';
import { archiveSummary, dropArchiveLine } from './archive-summary.js';
import { localize } from './local-answer.js';

/**
 * Archives the summary and stores `state`: `'stored'`, `'local'` (the store is down: the
 * compaction answers this call only) or `'retry'` (another compaction landed first).
 */
export async function storeCompaction(
  deps: PipelineDeps,
  prepared: PreparedRequest,
  cascade: CascadeResult,
  state: SessionState,
  write: { fencingToken: number | undefined; version: number; timing: (start: number) => EventTiming },
): Promise<'stored' | 'local' | 'retry'> {
  // The summary file goes to the archive before the state names its version: a crash between
  // the two leaves a summary no state holds yet, never a stored version without its file.
  await archiveSummary(deps, prepared, cascade, state);
  const expectedVersion = prepared.state?.version ?? 0;
  // Pins remembered since this run read the state (they do not move the version) are kept.
  const stored = await deps.store.get(prepared.key);
  if ((stored?.version ?? 0) === expectedVersion) mergePins(state, stored);
  const written = await deps.store.set(prepared.key, state, {
    expectedVersion,
    ...(write.fencingToken === undefined ? {} : { fencingToken: write.fencingToken }),
  });
  if (written) return 'stored';
  // The store went down during the compaction: it could not grant the version, so this call
  // gets the compaction as a local answer (no version, no `sum-vN` named).
  if (deps.store instanceof FailOpenStore && deps.store.down) {
    // Its summary went to the archive under this version: no later summary may take it.
    if (state.summary && deps.archive.storage) deps.store.archivedUnstored(prepared.key, state.version);
    dropArchiveLine(deps, prepared, cascade, write.version);
    if (state.summary && cascade.summary) state.summary.text = cascade.summary.body;
    localize(deps, prepared, cascade, state);
    return 'local';
  }
  deps.bus.emit(
    prepared.context,
    'compact.error',
    {
      errorType: 'concurrent_compaction',
      message: 'another compaction of this session landed first; its result is used',
      fallback: 'reload',
    },
    write.timing(Date.now()),
  );
  deps.archive.trackEvents(prepared.context);
  return 'retry';
}

/** Adds the stored state's pinned ids to `state` (pins are only ever added). */
function mergePins(state: SessionState, stored: SessionState | undefined): void {
  const extra = stored?.pinnedIds ?? [];
  if (extra.length === 0) return;
  const pins = new Set(state.pinnedIds ?? []);
  for (const id of extra) pins.add(id);
  state.pinnedIds = [...pins];
}
