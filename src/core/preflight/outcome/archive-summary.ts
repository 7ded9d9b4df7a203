/**
 * The summary's archive in a triggered preflight (run-preflight.ts): the summary archived
 * before its state is stored, the line that names its recall ref, and what is undone when
 * the archive could not be written (the line, the refs of originals left unarchived).
 */
import { CompactError } from '../../errors.js';
import type { SessionState } from '../../session/session-store.js';
import { type PipelineDeps, type PreparedRequest, summaryText } from '../prepare-request.js';
import { type CascadeInput, type CascadeResult, summaryMessageTokens } from '../run-cascade.js';

/** The line a summary ends with when the folded messages are archived under a reference. */
export function archiveLine(version: number): string {
  const earlier = version > 1 ? ` (earlier: "sum-v1" to "sum-v${version - 1}")` : '';
  return `Archived originals: recall ref "sum-v${version}"${earlier}`;
}

/** Archives the summary a compaction wrote (before its state is stored). */
export async function archiveSummary(
  deps: PipelineDeps,
  prepared: PreparedRequest,
  cascade: CascadeResult,
  state: SessionState,
): Promise<void> {
  const summary = cascade.summary;
  if (!summary || !state.summary) return;
  const { context } = prepared;
  await deps.archive.summary(
    context,
    {
      sessionId: context.sessionId,
      step: state.version,
      text: summaryText(deps, prepared.key, state.version, state.summary.text),
      tokens: summary.tokens,
      strategy: String(prepared.policy.strategy),
      summarizer: summary.summarizer,
      coveredIds: state.coveredIds,
      createdAt: Date.now(),
    },
    prepared.decisionSpanId,
  );
}

/** The error of a compaction stopped because the archive could not be written (`requireArchive`). */
export function pruningBlocked(deps: PipelineDeps): CompactError {
  return new CompactError(
    'storage_failed',
    `${deps.archive.lastFailure ?? 'the archive could not be written'}; nothing was pruned (requireArchive is on)`,
  );
}

/** Removes the summary's archive line (its `sum-vN` was not written) and recounts the summary. */
export function dropArchiveLine(
  deps: PipelineDeps,
  prepared: PreparedRequest,
  cascade: CascadeResult,
  version: number,
): void {
  const summary = cascade.summary;
  const line = archiveLine(version);
  if (!summary?.body.endsWith(line)) return;
  const body = summary.body.slice(0, -line.length).replace(/\n$/, '');
  const tokens = summaryMessageTokens(
    prepared.codec,
    deps.counter,
    summaryText(deps, prepared.key, version, body),
  );
  cascade.tokensAfter -= summary.tokens - tokens;
  summary.body = body;
  summary.tokens = tokens;
  for (const level of cascade.levels)
    if (level.level === 'summarize') level.refs = level.refs.filter((ref) => ref !== `sum-v${version}`);
}

/** Re-renders the rewrites whose originals were not archived without their recall ref. */
export function unnameRefs(
  input: CascadeInput,
  cascade: CascadeResult,
  unwritten: ReadonlySet<string>,
): void {
  for (const entry of cascade.entries) {
    if (!entry.rewrite || !unwritten.has(entry.rewrite.ref)) continue;
    const rewrite = { ...entry.rewrite, unarchived: true };
    const realized = input.realize(entry.item, rewrite);
    cascade.tokensAfter += realized.tokens - entry.tokens;
    entry.rewrite = rewrite;
    entry.wire = realized.wire;
    entry.tokens = realized.tokens;
  }
  for (const level of cascade.levels) level.refs = level.refs.filter((ref) => !unwritten.has(ref));
}
