/**
 * The built-in summarizer, as a list of steps: units, dated segments and speakers, tool
 * facts, key identifiers, scoring, selection, layout, and an exact fit to the budget.
 */
import { CompactError } from '../../errors.js';
import { warmInstructionModel } from '../../language/instruction-model.js';
import { pickKeyIdentifierSteps } from '../../language/key-identifiers.js';
import { ShardedMap } from '../../sharded-map.js';
import { runSteps, runStepsYielding, SLICE_MS, type Steps } from '../../time-slice.js';
import type { SummarizeRequest, SummarizeResult, Summarizer } from '../summarizer.js';
import { fillExactSteps } from './exact-fill.js';
import { type Extraction, extractSteps } from './extraction.js';
import { renderSummary } from './render-summary.js';
import { scoreUnitSteps } from './score-units.js';
import { findSpeakersSteps } from './segments.js';
import { selectUnitSteps, weakestUnits } from './select-units.js';
import { toolFactSteps } from './tool-facts.js';
import type { Unit, WordRarities } from './types.js';
import { warmSentenceSegmenterSteps } from './units.js';
import { unquotedUnitSteps } from './unquoted-units.js';
import { collectUserSectionSteps, renderUserSectionSteps, splitUserSections } from './user-sections.js';

/**
 * Scale of the user sections' room in a chat between people (two or more `Name:` speakers, no
 * tool call): what one person asks the other is no order to the assistant, and the room goes
 * to the facts of the conversation.
 */
export const PEOPLE_HEAD_SCALE = 0.2;
/** Share of the budget the key identifiers may take. */
export const KEY_IDS_SHARE = 0.25;
/** Tokens of a section heading line in the summary (`## Conversation`). */
const SECTION_HEADING_TOKENS = 4;
/** Longest manual-compaction note kept (longer notes are cut at a word). */
const MAX_NOTE_CHARS = 300;

function noteText(note: string | undefined): string | undefined {
  if (!note?.trim()) return undefined;
  const flat = note.replace(/\s+/g, ' ').trim();
  if (flat.length <= MAX_NOTE_CHARS) return flat;
  const cut = flat.slice(0, MAX_NOTE_CHARS);
  return `${cut.slice(0, Math.max(0, cut.lastIndexOf(' ')))} …`;
}

/** Options of {@link fitSummary}. */
interface FitInput {
  extraction: Extraction;
  idf: WordRarities;
  maxTokens: number;
  countTokens: (text: string) => number;
  note: string | undefined;
}

/**
 * `countTokens` remembered per text, in a sharded map: a `Map` of 300k units (or of 300k key
 * identifiers, "hi 1" to "hi 300000") grew in one `set` that held the loop 16-40 ms (issue 47).
 */
function rememberedCounts(countTokens: (text: string) => number): (text: string) => number {
  const counts = new ShardedMap<number>();
  return (text) => {
    let c = counts.get(text);
    if (c === undefined) {
      c = countTokens(text);
      counts.set(text, c);
    }
    return c;
  };
}

/**
 * Fills the budget, then drops the weakest units until the exact count fits; the key
 * identifiers take at most a quarter and leave out ids the kept units already show.
 */
function* fitSummarySteps(input: FitInput): Steps<string> {
  const { extraction, idf, maxTokens, countTokens, note } = input;
  // A unit's cost is its line and separator; ids are counted once (the list is picked again
  // as the chosen lines change).
  const unitCount = rememberedCounts(countTokens);
  const cost = (unit: Unit) => unitCount(unit.text) + 2;
  const idCost = rememberedCounts(countTokens);
  const ranked = yield* extraction.ledger.rankedSteps();
  const keyBudget = Math.floor(maxTokens * KEY_IDS_SHARE);
  // Ids the user sections quote are listed again: the list is their backup when a squeezed
  // round drops an instruction line (one ticket was lost without it in the retention eval).
  let ids = yield* pickKeyIdentifierSteps(ranked, keyBudget, idCost);
  const idsCost = ids.reduce((n, id) => n + idCost(id) + 2, ids.length > 0 ? 8 : 0);
  const fixed = note ? countTokens(`Note: ${note}`) + 1 : 0;
  const chosen = new Set<Unit>();
  // The lines' own section heading (`## Conversation`) is paid out of the budget too.
  const budget = Math.floor((maxTokens - fixed - idsCost - SECTION_HEADING_TOKENS) * 0.95);
  for (const unit of yield* selectUnitSteps(extraction.units, { budget, cost, idf })) chosen.add(unit);
  yield;
  const shown = () => [...chosen].map((u) => u.text).join('\n');
  function* refreshIds(): Steps<void> {
    const text = shown();
    ids = yield* pickKeyIdentifierSteps(ranked, keyBudget, idCost, (id) => text.includes(id));
  }
  yield* refreshIds();
  const render = () => renderSummary({ segments: extraction.segments, units: chosen, ids, note });
  let body = render();
  let count = countTokens(body);
  for (let round = 0; round < 3 && maxTokens - count > Math.max(8, maxTokens * 0.03); round++) {
    const extra = Math.floor((maxTokens - count) * 0.85);
    const added = yield* selectUnitSteps(extraction.units, { budget: extra, cost, idf, chosen });
    if (added.length === 0) break;
    for (const unit of added) chosen.add(unit);
    yield* refreshIds();
    body = render();
    count = countTokens(body);
    yield;
  }
  while (count > maxTokens && chosen.size > 0) {
    yield;
    for (const unit of weakestUnits(chosen, count - maxTokens, cost)) chosen.delete(unit);
    body = render();
    count = countTokens(body);
  }
  // Not in a chat: there the room left takes in small talk the fitting left out (the LoCoMo
  // held-out answers kept fell from 33.0% to 30.6% with it).
  if (count <= maxTokens && extraction.agentic)
    ({ body, count } = yield* fillExactSteps({
      ...input,
      units: extraction.units,
      chosen,
      cost,
      render,
      body,
      count,
    }));
  while (count > maxTokens && body.length > 0) {
    // Only the identifiers and the note are left: drop lines from the end.
    body = body.slice(0, Math.max(0, body.lastIndexOf('\n')));
    count = countTokens(body);
  }
  body = body.replace(/(?:\n?## [^\n]*)+$/, '');
  return body.includes('\n- ') || body.startsWith('- ')
    ? body
    : bestUnitFitting(extraction.units, maxTokens, countTokens) || body;
}

/**
 * When no whole unit fits a tiny budget: the most valuable unit, cut after the most whole
 * words that fit (never inside a word).
 */
function bestUnitFitting(
  units: readonly Unit[],
  maxTokens: number,
  countTokens: (text: string) => number,
): string {
  let best: Unit | undefined;
  for (const unit of units) if (unit.value > 0 && (!best || unit.value > best.value)) best = unit;
  if (!best) return '';
  const words = best.text.split(/\s+/);
  const line = (n: number) =>
    `- ${best.tool || !best.speaker ? '' : `${best.speaker}: `}${words.slice(0, n).join(' ')}${n < words.length ? ' …' : ''}`;
  let low = 0;
  let high = words.length;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (countTokens(line(mid)) <= maxTokens) low = mid;
    else high = mid - 1;
  }
  return low > 0 ? line(low) : '';
}

/**
 * The built-in summarizer: deterministic, offline, no model. It cuts the messages into
 * units (sentences and clauses, small talk dropped) and tool facts (`name(key arguments) →
 * outcome`, results paired with calls by position), values each unit by the rarity of its
 * words times content signals, and keeps the best value per token with a novelty discount,
 * filling `maxTokens` exactly. The summary is laid out oldest first in dated segments, one
 * line per speaker turn, after a list of key identifiers (ids passed to state-changing calls,
 * then ids the user and the assistant named). A previous summary is parsed back into its
 * units, which compete with the new ones. It never invents: every line is text from the input
 * (or a tool fact built from a call and its result). The same layout serves every strategy.
 *
 * @example
 * ```ts
 * const manager = new CompactManager({ model: 'gpt-4o', summarizer: new EmbeddedSummarizer() });
 * ```
 */
export class EmbeddedSummarizer implements Summarizer {
  readonly name = 'embedded';
  readonly #sliceMs: number;

  /**
   * @param options.sliceMs - Longest stretch of work, in milliseconds, between two turns of
   *   the event loop in {@link summarize} (default 5; 0 gives the loop a turn after every
   *   message).
   */
  constructor(options: { sliceMs?: number } = {}) {
    const sliceMs = options.sliceMs ?? SLICE_MS;
    if (!(sliceMs >= 0) || !Number.isFinite(sliceMs))
      throw new CompactError('invalid_argument', `sliceMs must be a finite number >= 0, got ${sliceMs}`);
    this.#sliceMs = sliceMs;
  }

  /**
   * Gives the event loop a turn every few milliseconds (between messages, between a few
   * dozen units), so a long history never holds the loop for the whole summary: a
   * background preparation shares it with the agent's own work.
   */
  async summarize(request: SummarizeRequest): Promise<SummarizeResult> {
    request.signal?.throwIfAborted();
    const text = await runStepsYielding(this.#steps(request), this.#sliceMs, request.signal);
    return { text, summarizer: this.name };
  }

  /** The same as {@link summarize}, synchronously. */
  summarizeSync(request: Omit<SummarizeRequest, 'sessionId'> & { sessionId?: string }): string {
    return runSteps(this.#steps(request));
  }

  *#steps(request: Omit<SummarizeRequest, 'sessionId'> & { sessionId?: string }): Steps<string> {
    // A fresh process's first summary: the sentence segmenter's construction (in pieces) and
    // the instruction model's decoding each in steps of their own, not inside the first user
    // message's step (together they held a background preparation's loop 24-30 ms).
    yield* warmSentenceSegmenterSteps();
    if (warmInstructionModel()) yield;
    const maxTokens = Math.max(0, Math.floor(request.maxTokens));
    const { countTokens } = request;
    // What the user asked comes first and gets its room first; the rest fills what is left.
    const previous = splitUserSections(request.previousSummary);
    // The previous summary's tool lines (`- name(args) → ...`) show an assistant at work; so does the request.
    const toolLines = /^- [\w.:-]{1,64}\(/m.test(previous.rest ?? '');
    const sections = yield* collectUserSectionSteps(
      request.messages,
      previous,
      request.sentPrefix?.messages,
      toolLines || request.withAssistant === true,
    );
    yield;
    const facts = yield* toolFactSteps(request.messages);
    yield;
    // No tool call now or in the previous summary (its tool lines read `- name(args) → ...`):
    // a chat, its sentences cut into finer clauses; between people when two speakers are named.
    const chat = facts.length === 0 && !toolLines;
    const betweenPeople = chat && (yield* findSpeakersSteps(request.messages)).size >= 2;
    const headRoom = betweenPeople ? Math.floor(maxTokens * PEOPLE_HEAD_SCALE) : maxTokens;
    const head = yield* renderUserSectionSteps(sections, headRoom, countTokens);
    yield;
    const extraction = yield* extractSteps(request.messages, previous.rest, facts, chat);
    if (head) extraction.units = yield* unquotedUnitSteps(extraction.units, head);
    yield;
    const idf = yield* scoreUnitSteps(extraction.units, {
      agentic: extraction.agentic,
      people: betweenPeople,
    });
    yield;
    const rest = head ? maxTokens - countTokens(head) - 1 : maxTokens;
    const body =
      rest >= 8
        ? yield* fitSummarySteps({
            extraction,
            idf,
            maxTokens: rest,
            countTokens,
            note: noteText(request.note),
          })
        : '';
    if (!head) return body;
    return body ? `${head}\n${body}` : head;
  }
}
