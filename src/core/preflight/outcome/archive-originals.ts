/**
 * What a compaction archives under recall refs: the originals of what it cleared, shortened
 * or cut, and the folded messages as a transcript (`sum-vN`).
 */

import type { PendingArtifact } from '../../archive/session-archive.js';
import type { IndexedMessage } from '../../messages/message-index.js';
import { blockSeams } from '../../redaction/split-secrets.js';
import type { SessionRewrite } from '../../session/session-store.js';
import type { CascadeResult } from '../run-cascade.js';

/** The text an archived original holds. */
function originalText(item: IndexedMessage, kind: SessionRewrite['kind']): string {
  const parsed = item.entry.parsed;
  if (kind === 'cleared') return parsed.toolResults.map((result) => result.output).join('\n\n');
  if (kind === 'shortened')
    return parsed.toolCalls.map((call) => `${call.name}(${call.arguments})`).join('\n\n');
  return [
    parsed.text,
    ...parsed.toolCalls.map((c) => `${c.name}(${c.arguments})`),
    ...parsed.toolResults.map((r) => r.output),
  ]
    .filter((text) => text !== '')
    .join('\n\n');
}

/** The folded messages as a plain transcript (what `sum-vN` holds). */
function renderFolded(items: readonly IndexedMessage[]): string {
  const lines: string[] = [];
  for (const item of items) {
    const parsed = item.entry.parsed;
    if (parsed.text !== '') lines.push(`[${item.index}] ${parsed.role}: ${parsed.text}`);
    for (const call of parsed.toolCalls) lines.push(`[${item.index}] call ${call.name}(${call.arguments})`);
    for (const result of parsed.toolResults) lines.push(`[${item.index}] result: ${result.output}`);
  }
  return lines.join('\n');
}

/** The artifacts of one compaction, one per reference (the latest rewrite of each). */
export function artifactsOf(cascade: CascadeResult, version: number): PendingArtifact[] {
  const latest = new Map<string, (typeof cascade.rewrites)[number]>();
  for (const rewrite of cascade.rewrites) latest.set(rewrite.rewrite.ref, rewrite);
  const artifacts: PendingArtifact[] = [...latest.values()].map(({ item, rewrite, toolName }) => ({
    ref: rewrite.ref,
    kind:
      rewrite.kind === 'cleared'
        ? 'tool_result'
        : rewrite.kind === 'shortened'
          ? 'tool_arguments'
          : 'message',
    text: originalText(item, rewrite.kind),
    ...(toolName ? { toolName } : {}),
    messageIndex: item.index,
    step: version,
    seams: blockSeams(item.entry.parsed.raw),
  }));
  if (cascade.summary && cascade.folded.length > 0) {
    artifacts.push({
      ref: `sum-v${cascade.summary.version}`,
      kind: 'summarized',
      text: renderFolded(cascade.folded),
      step: cascade.summary.version,
      seams: cascade.folded.flatMap((item) => blockSeams(item.entry.parsed.raw)),
    });
  }
  return artifacts;
}
