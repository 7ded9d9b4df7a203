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

/**
 * Where a message's texts start in an artifact's text (undefined: not in it): its text and each
 * tool result's output, so that its seams are cut where they are, not where an equal text is
 * found first (secrets-88).
 */
interface Placed {
  text?: number;
  outputs: (number | undefined)[];
}

/** A text built from parts, noting where each part starts. */
class TextBuilder {
  text = '';

  /** Appends `part` after `separator` (none at the start) and returns where it starts. */
  add(part: string, separator: string): number {
    if (this.text !== '') this.text += separator;
    const at = this.text.length;
    this.text += part;
    return at;
  }
}

/** The text an archived original holds, and where the message's texts are in it. */
function originalText(item: IndexedMessage, kind: SessionRewrite['kind']): { text: string; placed: Placed } {
  const parsed = item.entry.parsed;
  const built = new TextBuilder();
  const placed: Placed = { outputs: [] };
  if (kind === 'shortened') return { text: callLines(parsed).join('\n\n'), placed };
  if (kind === 'cleared') {
    // Joined as they are, empty outputs too.
    parsed.toolResults.forEach((result, index) => {
      if (index > 0) built.text += '\n\n';
      placed.outputs.push(built.text.length);
      built.text += result.output;
    });
    return { text: built.text, placed };
  }
  if (parsed.text !== '') placed.text = built.add(parsed.text, '\n\n');
  for (const call of callLines(parsed)) if (call !== '') built.add(call, '\n\n');
  for (const { output } of parsed.toolResults)
    placed.outputs.push(output === '' ? undefined : built.add(output, '\n\n'));
  return { text: built.text, placed };
}

/** A message's lines in `sum-vN` (its text, its tool calls, its tool results, each with its header), appended to `built`. */
function addFoldedLines(item: IndexedMessage, built: TextBuilder): Placed {
  const parsed = item.entry.parsed;
  const placed: Placed = { outputs: [] };
  const line = (header: string, body: string) => built.add(`${header}${body}`, '\n') + header.length;
  if (parsed.text !== '') placed.text = line(`[${item.index}] ${parsed.role}: `, parsed.text);
  for (const call of callLines(parsed)) line(`[${item.index}] call `, call);
  for (const result of parsed.toolResults)
    placed.outputs.push(line(`[${item.index}] result: `, result.output));
  return placed;
}

/** A message's lines in `sum-vN`, each ended by a newline (none when it has none). */
function foldedLines(item: IndexedMessage): string {
  const built = new TextBuilder();
  addFoldedLines(item, built);
  return built.text === '' ? '' : `${built.text}\n`;
}

/** The folded messages as a plain transcript (what `sum-vN` holds), and where each one's texts are. */
function renderFolded(items: readonly IndexedMessage[]): { text: string; placed: Placed[] } {
  const built = new TextBuilder();
  const placed = items.map((item) => addFoldedLines(item, built));
  return { text: built.text, placed };
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

/** Where the first (`end` false) or last text of a message (as {@link edge} reads it) starts. */
function edgeAt(item: IndexedMessage, placed: Placed, end: boolean): number | undefined {
  const parsed = item.entry.parsed;
  const results = parsed.toolResults.length;
  if (end) return results > 0 ? placed.outputs[results - 1] : placed.text;
  return parsed.text !== '' ? placed.text : placed.outputs[0];
}

/**
 * A seam with its `start` where its tail starts in the artifact's text (`at` the head's or
 * the tail's start there, less `before`), or none when that is not known.
 */
function placedAt(seam: BlockSeam, at: number | undefined, before = 0): BlockSeam {
  if (at === undefined) delete seam.start;
  else seam.start = at - before;
  return seam;
}

/**
 * A message's block seams, their `start` moved from the text of their group (the message's
 * text, or the output the group is) to where that text is in the artifact's, or left out when
 * that is not known (a server tool's blocks: then the seam is searched for).
 */
function placedBlockSeams(item: IndexedMessage, placed: Placed): BlockSeam[] {
  const parsed = item.entry.parsed;
  return blockSeams(parsed.raw).map((seam) => {
    const base =
      seam.group === 0
        ? parsed.text !== ''
          ? placed.text
          : placed.outputs[0]
        : placed.outputs[parsed.toolResults.findIndex((result) => result.callId === seam.owner)];
    return placedAt(
      seam,
      base === undefined ? undefined : seam.start === undefined ? undefined : base + seam.start,
    );
  });
}

/**
 * The seams of an archived original: its blocks', and its ends' with the messages beside it
 * (outside the text: a secret split over them is cut on this side).
 */
function originalSeams(
  item: IndexedMessage,
  kind: SessionRewrite['kind'],
  history: Positional<IndexedMessage>,
  placed: Placed,
): BlockSeam[] {
  const seams = placedBlockSeams(item, placed);
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
          placedAt(
            {
              tail: '',
              head,
              joiner: lead,
              group: -1,
              outside: { afterTail: '', beforeHead: edge(before, true) },
            },
            edgeAt(item, placed, false),
            lead.length,
          ),
        ]
      : [];
  const end: BlockSeam[] =
    after && tail
      ? [
          placedAt(
            {
              tail,
              head: '',
              joiner: trail,
              group: -2,
              outside: { afterTail: edge(after, false), beforeHead: '' },
            },
            edgeAt(item, placed, true),
          ),
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
function foldedSeams(
  folded: readonly IndexedMessage[],
  history: Positional<IndexedMessage>,
  placed: readonly Placed[],
): BlockSeam[] {
  const seams: BlockSeam[] = [];
  let last: IndexedMessage | undefined;
  let lastPlaced: Placed | undefined;
  // What sum-vN holds after `last`'s last text (or from its start): calls, headers.
  let between = '';
  for (const [i, item] of folded.entries()) {
    const head = edge(item, false);
    if (head === '') {
      between += foldedLines(item);
      continue;
    }
    const previous = beside(history, item.index, -1);
    const joiner = `${last ? `${frame(last, 'folded').trail}\n` : ''}${between}${frame(item, 'folded').lead}`;
    const seam: BlockSeam = { tail: edge(last, true), head, group: -2 - i, joiner };
    if (!last || previous?.index !== last.index) {
      const next = last && beside(history, last.index, 1);
      seam.outside = { afterTail: edge(next, false), beforeHead: edge(previous, true) };
    }
    const at = edgeAt(item, placed[i]!, false);
    if (seam.tail !== '' || seam.outside) seams.push(placedAt(seam, at, joiner.length + seam.tail.length));
    seams.push(...placedBlockSeams(item, placed[i]!));
    last = item;
    lastPlaced = placed[i];
    between = '';
  }
  const next = last && beside(history, last.index, 1);
  if (last && lastPlaced && next) {
    const joiner = `${frame(last, 'folded').trail}${between === '' ? '' : `\n${between.slice(0, -1)}`}`;
    const outside = { afterTail: edge(next, false), beforeHead: '' };
    const seam: BlockSeam = { tail: edge(last, true), head: '', group: -1, joiner, outside };
    seams.push(placedAt(seam, edgeAt(last, lastPlaced, true)));
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
  const artifacts: PendingArtifact[] = [...latest.values()].map(({ item, rewrite, toolName }) => {
    const { text, placed } = originalText(item, rewrite.kind);
    return {
      ref: rewrite.ref,
      kind:
        rewrite.kind === 'cleared'
          ? 'tool_result'
          : rewrite.kind === 'shortened'
            ? 'tool_arguments'
            : 'message',
      text,
      ...(toolName ? { toolName } : {}),
      messageIndex: item.index,
      step: version,
      seams: originalSeams(item, rewrite.kind, history, placed),
    };
  });
  if (cascade.summary && cascade.folded.length > 0) {
    const { text, placed } = renderFolded(cascade.folded);
    artifacts.push({
      ref: `sum-v${cascade.summary.version}`,
      kind: 'summarized',
      text,
      step: cascade.summary.version,
      seams: foldedSeams(cascade.folded, history, placed),
    });
  }
  return artifacts;
}
