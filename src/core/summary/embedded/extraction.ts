/**
 * The extraction step of the built-in summarizer: units of the previous summary and the
 * messages (text, tool-result excerpts, tool facts), with the identifiers they name.
 */
import { ChunkedList } from '../../chunked-list.js';
import { findIdentifiers, IdentifierLedger } from '../../language/key-identifiers.js';
import type { CompactMessage } from '../../messages/message.js';
import { releaseRegExpCode } from '../../process-caches.js';
import type { Steps } from '../../time-slice.js';
import { parsePrevious, supersedeCarriedSteps } from './parse-previous.js';
import { annotateRelativeDate } from './relative-dates.js';
import { placeMessagesSteps } from './segments.js';
import { MAX_REVEALED_IDS, type ToolFact } from './tool-facts.js';
import { EXCERPT_SPEAKER, type Segment, type Unit, type UnitSource } from './types.js';
import { contentWords, excerptUnits, textUnits } from './units.js';

export /** What the steps extract from the previous summary and the messages. */
interface Extraction {
  segments: Segment[];
  units: Unit[];
  ledger: IdentifierLedger;
  agentic: boolean;
}

function sourceOf(message: CompactMessage): UnitSource | undefined {
  if (message.kind === 'reasoning' || message.role === 'system' || message.role === 'developer')
    return undefined;
  if (message.toolResults.length > 0 || message.role === 'tool') return undefined;
  return message.role === 'user' ? 'user' : 'assistant';
}

/**
 * A position in a file (`src/db/pool.ts:124`): a search hit or a stack frame, not an entity a
 * later step names. Listed once, it was carried by every later version (a listed id ranks as
 * the summary's): a planted session's list ended with ten grep hits, 90 of its 750 tokens.
 */
const LINE_POSITION = /:\d+(?::\d+)?$/;

/**
 * The ids a tool result reveals beyond the call's own (an order's items, a user's payment
 * method), at the lowest rank of the key identifiers: kept when the result's line is not,
 * and carried by later versions. Not from a listing (the whole result names more than a
 * few): none of those is key.
 */
function addResultIds(ledger: IdentifierLedger, fact: ToolFact): void {
  const arrow = fact.text.indexOf(' → ');
  if (arrow < 0 || fact.traits.scratch || fact.traits.superseded) return;
  if (fact.revealedIds > MAX_REVEALED_IDS) return;
  const given = fact.text.slice(0, arrow);
  for (const found of findIdentifiers(fact.text.slice(arrow + 3), MAX_REVEALED_IDS))
    if (!given.includes(found.text) && !LINE_POSITION.test(found.text)) ledger.add(found.text, 'result');
}

/** Units of the previous summary and the messages, with the identifiers they name; a pause after each message. */
export function* extractSteps(
  messages: readonly CompactMessage[],
  previousSummary: string | undefined,
  facts: readonly ToolFact[],
  chat: boolean,
): Steps<Extraction> {
  const previous = parsePrevious(previousSummary, chat);
  const segments = previous.segments;
  // Chunked (300k pushed on one array grew it by copies: issue 47), joined to the previous ones.
  const added = new ChunkedList<Unit>();
  const ledger = new IdentifierLedger();
  for (const id of previous.ids) ledger.add(id, 'summary');
  const placed = yield* placeMessagesSteps(messages, segments);
  let nextFact = 0;
  for (let index = 0; index < messages.length; index++) {
    if (index > 0) yield;
    const message = messages[index]!;
    const { segment, parts } = placed[index]!;
    const source = sourceOf(message);
    let k = 0;
    const order = () => index * 1000 + k++;
    if (source) {
      for (const part of parts) {
        ledger.addText(part.text, source === 'user' ? 'user' : 'assistant');
        for (const unit of textUnits(part.text, chat)) {
          const text = annotateRelativeDate(unit.text, segments[segment]!.date);
          added.push({
            text,
            words: unit.words,
            speaker: part.speaker,
            source,
            segment,
            order: order(),
            value: 0,
          });
        }
      }
    }
    for (const result of message.toolResults)
      for (const unit of excerptUnits(result.output))
        added.push({
          ...unit,
          speaker: EXCERPT_SPEAKER,
          source: 'tool',
          segment,
          order: order(),
          value: 0,
          filler: true,
        });
    while (nextFact < facts.length && facts[nextFact]!.message === index) {
      const fact = facts[nextFact++]!;
      if (fact.traits.stateChanging) for (const id of fact.argumentIds) ledger.add(id, 'action');
      else addResultIds(ledger, fact);
      added.push({
        text: fact.text,
        // A cleared result's recall ref is unique by construction: it is no rare content word.
        words: contentWords(fact.text.replace(/ → \(cleared[^)]*\)$/, '')),
        speaker: fact.name,
        source: 'tool',
        segment,
        order: order(),
        tool: fact.traits,
        value: 0,
      });
    }
  }
  const units = added.toArray(previous.units); // (the previous ones were grown in place before)
  if (units.length > 0) yield* supersedeCarriedSteps(units);
  return {
    segments,
    units,
    ledger,
    // A round with no new tool call is still an agent's: the previous summary's tool lines say so.
    agentic: facts.length > 0 || units.some((u) => u.tool),
  };
}

// Its machine code is dropped when the last manager shuts down (process-caches.ts).
releaseRegExpCode(LINE_POSITION);
