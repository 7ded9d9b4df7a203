/**
 * What a compaction archives under recall refs: the originals of what it cleared, shortened
 * or cut, and the folded messages as a transcript (`sum-vN`).
 */

import type { PendingArtifact } from '../../archive/session-archive.js';
import type { IndexedMessage } from '../../messages/message-index.js';
import { edgeText } from '../../redaction/message-seams.js';
import { type BlockSeam, blockSeams } from '../../redaction/split-secrets.js';
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

/**
 * The seam between two adjacent messages (the last text of `before`, the first of `after`,
 * whole; split-secrets.ts' seamCut reads the windows): a secret split over them is redacted across it.
 */
function messageSeam(
  before: IndexedMessage | undefined,
  after: IndexedMessage | undefined,
  seam: Pick<BlockSeam, 'group' | 'joiner' | 'side'>,
): BlockSeam[] {
  const a = before && edgeText(before.entry.parsed, true);
  const b = after && edgeText(after.entry.parsed, false);
  if (!a || !b) return [];
  return [{ tail: a, head: b, ...seam }];
}

/** The seams of an archived original: its blocks', and its ends' with the messages beside it. */
function originalSeams(
  item: IndexedMessage,
  kind: SessionRewrite['kind'],
  history: readonly IndexedMessage[],
): BlockSeam[] {
  const seams = blockSeams(item.entry.parsed.raw);
  if (kind === 'shortened') return seams;
  const previous = beside(history, item.index, -1);
  const next = beside(history, item.index, 1);
  return [
    ...(previous ? messageSeam(previous, item, { group: -1, side: 'start' }) : []),
    ...seams,
    ...(next ? messageSeam(item, next, { group: -1, side: 'end' }) : []),
  ];
}

/** A message with tool calls and no text (an assistant's call alone): a seam reads past it. */
function callsOnly(item: IndexedMessage): boolean {
  const parsed = item.entry.parsed;
  return parsed.text === '' && parsed.toolResults.length === 0 && parsed.toolCalls.length > 0;
}

/** The message before (`step` -1) or after (1) `index`, past up to four calls-only ones. */
function beside(history: readonly IndexedMessage[], index: number, step: number): IndexedMessage | undefined {
  for (let at = index + step, n = 0; n <= 4; at += step, n++) {
    const item = history[at];
    if (item?.index !== at) return undefined;
    if (!callsOnly(item)) return item;
  }
  return undefined;
}

/** The seams of `sum-vN`: each message's blocks, and each message with the next (its header between). */
function foldedSeams(folded: readonly IndexedMessage[]): BlockSeam[] {
  const seams: BlockSeam[] = [];
  for (const [i, item] of folded.entries()) {
    seams.push(...blockSeams(item.entry.parsed.raw));
    let k = i + 1;
    let calls = '';
    for (; folded[k] && k - i <= 4 && callsOnly(folded[k]!); k++) {
      for (const call of folded[k]!.entry.parsed.toolCalls)
        calls += `\n[${folded[k]!.index}] call ${call.name}(${call.arguments})`;
    }
    const next = folded[k];
    if (!next) continue;
    const parsed = next.entry.parsed;
    const joiner = `${calls}\n[${next.index}] ${parsed.text !== '' ? parsed.role : 'result'}: `;
    seams.push(...messageSeam(item, next, { group: -2 - i, joiner }));
  }
  return seams;
}

/**
 * The artifacts of one compaction, one per reference (the latest rewrite of each); `history`,
 * the session's messages by index, gives each original the messages beside it.
 */
export function artifactsOf(
  cascade: CascadeResult,
  version: number,
  history: readonly IndexedMessage[] = [],
): PendingArtifact[] {
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
    seams: originalSeams(item, rewrite.kind, history),
  }));
  if (cascade.summary && cascade.folded.length > 0) {
    artifacts.push({
      ref: `sum-v${cascade.summary.version}`,
      kind: 'summarized',
      text: renderFolded(cascade.folded),
      step: cascade.summary.version,
      seams: foldedSeams(cascade.folded),
    });
  }
  return artifacts;
}
