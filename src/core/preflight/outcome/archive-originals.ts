/**
 * What a compaction archives under recall refs: the originals of what it cleared, shortened
 * or cut, and the folded messages as a transcript (`sum-vN`).
 */

import type { PendingArtifact } from '../../archive/session-archive.js';
import type { Positional } from '../../chunked-list.js';
import type { IndexedMessage } from '../../messages/message-index.js';
import { edgeText } from '../../redaction/message-seams.js';
import { type BlockSeam, blockSeams } from '../../redaction/split-secrets.js';
import type { SessionRewrite } from '../../session/session-store.js';
import type { CascadeResult } from '../run-cascade.js';

type Parsed = IndexedMessage['entry']['parsed'];

/** How a tool call reads in an archived original (`calls`) and in `sum-vN`. */
const callLines = (parsed: Parsed) => parsed.toolCalls.map((call) => `${call.name}(${call.arguments})`);

/** The text an archived original holds. */
function originalText(item: IndexedMessage, kind: SessionRewrite['kind']): string {
  const parsed = item.entry.parsed;
  if (kind === 'cleared') return parsed.toolResults.map((result) => result.output).join('\n\n');
  if (kind === 'shortened') return callLines(parsed).join('\n\n');
  return [parsed.text, ...callLines(parsed), ...parsed.toolResults.map((r) => r.output)]
    .filter((text) => text !== '')
    .join('\n\n');
}

/** A message's lines in `sum-vN`: its text, its tool calls, its tool results, each with its header. */
function foldedLines(item: IndexedMessage): string[] {
  const parsed = item.entry.parsed;
  const lines: string[] = [];
  if (parsed.text !== '') lines.push(`[${item.index}] ${parsed.role}: ${parsed.text}`);
  for (const call of callLines(parsed)) lines.push(`[${item.index}] call ${call}`);
  for (const result of parsed.toolResults) lines.push(`[${item.index}] result: ${result.output}`);
  return lines;
}

/** The folded messages as a plain transcript (what `sum-vN` holds). */
function renderFolded(items: readonly IndexedMessage[]): string {
  return items.flatMap(foldedLines).join('\n');
}

/**
 * What a text holds of a message before its first text (`lead`: its header; its tool calls
 * when results follow them) and after its last (`trail`: the calls written after its text),
 * in `sum-vN` (`folded`) or an archived original (`cut`).
 */
function frame(item: IndexedMessage, kind: 'folded' | 'cut'): { lead: string; trail: string } {
  const parsed = item.entry.parsed;
  const folded = kind === 'folded';
  const calls = callLines(parsed).map((call) => (folded ? `[${item.index}] call ${call}` : call));
  const sep = folded ? '\n' : '\n\n';
  const header = (role: string) => (folded ? `[${item.index}] ${role}: ` : '');
  const lead =
    parsed.text !== '' ? header(parsed.role) : calls.map((call) => call + sep).join('') + header('result');
  const trail = parsed.toolResults.length > 0 ? '' : calls.map((call) => sep + call).join('');
  return { lead, trail };
}

/** A message with tool calls and no text (an assistant's call alone): a seam reads past it. */
function callsOnly(item: IndexedMessage): boolean {
  const parsed = item.entry.parsed;
  return parsed.text === '' && parsed.toolResults.length === 0 && parsed.toolCalls.length > 0;
}

/** The message before (`step` -1) or after (1) `index`, past up to four calls-only ones. */
function beside(
  history: Positional<IndexedMessage>,
  index: number,
  step: number,
): IndexedMessage | undefined {
  for (let at = index + step, n = 0; n <= 4; at += step, n++) {
    const item = history.at(at);
    if (item?.index !== at) return undefined;
    if (!callsOnly(item)) return item;
  }
  return undefined;
}

/** The first (`end` false) or last text of a message, or `''`. */
const edge = (item: IndexedMessage | undefined, end: boolean) =>
  (item && edgeText(item.entry.parsed, end)) ?? '';

/**
 * The seams of an archived original: its blocks', and its ends' with the messages beside it
 * (outside the text: a secret split over them is cut on this side).
 */
function originalSeams(
  item: IndexedMessage,
  kind: SessionRewrite['kind'],
  history: Positional<IndexedMessage>,
): BlockSeam[] {
  const seams = blockSeams(item.entry.parsed.raw);
  const parsed = item.entry.parsed;
  // A cleared result's original holds its results only: its text's seam is not in it.
  if (kind === 'shortened' || (kind === 'cleared' && parsed.toolResults.length === 0)) return seams;
  const { lead, trail } = kind === 'cleared' ? { lead: '', trail: '' } : frame(item, 'cut');
  const head = edge(item, false);
  const tail = edge(item, true);
  const before = beside(history, item.index, -1);
  const after = beside(history, item.index, 1);
  const start: BlockSeam[] =
    before && head && (kind !== 'cleared' || parsed.text === '')
      ? [
          {
            tail: '',
            head,
            joiner: lead,
            group: -1,
            outside: { afterTail: '', beforeHead: edge(before, true) },
          },
        ]
      : [];
  const end: BlockSeam[] =
    after && tail
      ? [
          {
            tail,
            head: '',
            joiner: trail,
            group: -2,
            outside: { afterTail: edge(after, false), beforeHead: '' },
          },
        ]
      : [];
  return [...start, ...seams, ...end];
}

/**
 * The seams of `sum-vN`: each message's blocks, and each folded message's last text with the
 * next one's first (the calls and headers between in the joiner). Where a message outside the
 * fold meets one side (a pinned turn before the fold, a kept message between or after its
 * messages), that side is cut across the seam with it too.
 */
function foldedSeams(folded: readonly IndexedMessage[], history: Positional<IndexedMessage>): BlockSeam[] {
  const seams: BlockSeam[] = [];
  let last: IndexedMessage | undefined;
  // What sum-vN holds after `last`'s last text (or from its start): calls, headers.
  let between = '';
  for (const [i, item] of folded.entries()) {
    const head = edge(item, false);
    if (head === '') {
      between += foldedLines(item)
        .map((line) => `${line}\n`)
        .join('');
      continue;
    }
    const previous = beside(history, item.index, -1);
    const joiner = `${last ? `${frame(last, 'folded').trail}\n` : ''}${between}${frame(item, 'folded').lead}`;
    const seam: BlockSeam = { tail: edge(last, true), head, group: -2 - i, joiner };
    if (!last || previous?.index !== last.index) {
      const next = last && beside(history, last.index, 1);
      seam.outside = { afterTail: edge(next, false), beforeHead: edge(previous, true) };
    }
    if (seam.tail !== '' || seam.outside) seams.push(seam);
    seams.push(...blockSeams(item.entry.parsed.raw));
    last = item;
    between = '';
  }
  const next = last && beside(history, last.index, 1);
  if (last && next) {
    const joiner = `${frame(last, 'folded').trail}${between === '' ? '' : `\n${between.slice(0, -1)}`}`;
    const outside = { afterTail: edge(next, false), beforeHead: '' };
    seams.push({ tail: edge(last, true), head: '', group: -1, joiner, outside });
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
  history: Positional<IndexedMessage> = [],
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
      seams: foldedSeams(cascade.folded, history),
    });
  }
  return artifacts;
}
