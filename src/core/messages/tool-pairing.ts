/**
 * Positional pairing of tool calls and results. Ids are not unique across a conversation
 * (local servers and several frameworks number calls per turn: `call_0` every turn;
 * replays reuse ids), so a result answers the nearest unanswered call with its id **in
 * the same round**: the round opens at the model turn that made the calls and closes at
 * the next model turn or user message. Every step that pairs (units, orphan checks, pin
 * closure, assembly, the summarizer's tool facts, the SDK adapters) reads this one result.
 */

import type { Positional } from '../chunked-list.js';
import { IntColumn } from '../int-column.js';
import type { Steps } from '../time-slice.js';
import type { CompactMessage, MessageKind, MessageRole, ToolResult } from './message.js';

/** What pairing needs to know about a message. */
export interface PairingInput {
  readonly role: MessageRole;
  readonly kind: MessageKind;
  readonly toolCalls: readonly { readonly id: string }[];
  readonly toolResults: readonly { readonly callId: string }[];
  /** The message text: a rolling summary (`<COMPACT-SUMMARY vN>`) separates rounds. */
  readonly text?: string;
}

/** A problem pairing found in the input: providers reject such requests. */
export interface PairingFinding {
  /** `orphan_result`: no call of its round has this id; `duplicate_result`: the call was already answered; `dangling_call`: the round closed without a result. */
  kind: 'orphan_result' | 'duplicate_result' | 'dangling_call';
  /** Index of the message in the input. */
  index: number;
  /** Position of the call or result within the message. */
  position: number;
  /** The call id. */
  callId: string;
}

/** A call or a result: the message it sits in and its position there. */
export interface ToolSite {
  readonly message: number;
  readonly position: number;
}

/** The pairing of a whole request. */
export interface ToolPairing {
  /** `round[i]`: the round message `i` belongs to, or -1 for messages outside any round. */
  readonly round: Int32Array;
  /** Per round: first and last message index (inclusive). */
  readonly rounds: readonly { start: number; end: number }[];
  /** `callOf.get(i)[r]`: where the call answered by result `r` of message `i` is (undefined for orphans). */
  readonly callOf: ReadonlyMap<number, readonly (ToolSite | undefined)[]>;
  /** Problems found, in input order. */
  readonly findings: readonly PairingFinding[];
}

/** True for an entry produced by the model: assistant text, calls, reasoning. */
function isModelSide(message: PairingInput): boolean {
  return message.kind === 'reasoning' || (message.role === 'assistant' && message.toolResults.length === 0);
}

/** An Int32Array of at least `length` slots holding `column`'s values (grown by doubling). */
function grown(column: Int32Array<ArrayBuffer>, length: number): Int32Array<ArrayBuffer> {
  if (length <= column.length) return column;
  const next = new Int32Array(Math.max(length, 2 * column.length));
  next.set(column);
  return next;
}

/**
 * Incremental pairing: feed messages in order with {@link ToolPairer.add}; state is small
 * (the open round's calls), so a history that grows by appending costs O(new messages).
 *
 * What is kept for the whole history is in columns (typed arrays grown by doubling): a round's
 * bounds, and for each tool result the message and position of its call. An array of sites per
 * result message and an object per site and per round were four objects alive per tool round of
 * a history, copied by every scavenge of a cold index (issue 47); {@link ToolPairer.callOf} and
 * {@link ToolPairer.rounds} build the objects on demand.
 */
export class ToolPairer {
  readonly findings: PairingFinding[] = [];
  /**
   * The round of each message (-1 outside any), and the first result site of each (below): in
   * chunks, as an array of 300k grew by a copy of itself in one write, and typed arrays grown
   * by doubling doubled at the same message as the index's chain (issue 47).
   */
  readonly #round = new IntColumn();
  /** Round `r`: its first message at `2r`, its last at `2r + 1`. */
  #bounds = new Int32Array(64);
  #roundCount = 0;
  /**
   * The results of message `i` are sites `#firstSite[i]` to `#firstSite[i + 1] - 1`: the call
   * each answers, its message at `2k` of `#sites` and its position at `2k + 1` (-1 for none).
   */
  readonly #firstSite = new IntColumn();
  #sites = new Int32Array(64);
  #siteCount = 0;
  /** Messages added (the next index). */
  #added = 0;
  /** Calls of the open round, by id, oldest first, with whether each was answered. */
  #open = new Map<string, { site: ToolSite; answered: boolean }[]>();
  /** True while the last entry was model-side (a model turn may span several items). */
  #inModelTurn = false;
  #roundIndex = -1;
  #roundHasCalls = false;

  /** Pairs message `index` (messages must be added in order, starting at 0). */
  add(message: PairingInput, index: number): void {
    // A message skipped (none should be) has no results, and no round.
    for (let i = this.#added; i <= index; i++) {
      this.#firstSite.set(i, this.#siteCount);
      this.#round.set(i, -1);
    }
    this.#added = index + 1;
    this.#addMessage(message, index);
    this.#firstSite.set(index + 1, this.#siteCount);
  }

  #addMessage(message: PairingInput, index: number): void {
    if (message.toolCalls.length === 0 && message.text?.startsWith('<COMPACT-SUMMARY v')) {
      // The summary stands for older history: the model turns around it are not one round.
      this.#inModelTurn = false;
      this.#round.set(index, -1);
      this.#closeRound();
      return;
    }
    if (isModelSide(message)) {
      if (!this.#inModelTurn) this.#openRound(index);
      this.#inModelTurn = true;
      this.#round.set(index, this.#roundIndex);
      this.#bounds[2 * this.#roundIndex + 1] = index;
      message.toolCalls.forEach((call, position) => {
        this.#roundHasCalls = true;
        let list = this.#open.get(call.id);
        if (!list) {
          list = [];
          this.#open.set(call.id, list);
        }
        list.push({ site: { message: index, position }, answered: false });
      });
      return;
    }
    this.#inModelTurn = false;
    if (message.toolResults.length > 0) {
      const results = message.toolResults;
      this.#sites = grown(this.#sites, 2 * (this.#siteCount + results.length));
      let answered = false;
      for (let position = 0; position < results.length; position++) {
        const callId = results[position]!.callId;
        const list = this.#open.get(callId);
        const call = list?.find((c) => !c.answered);
        const k = 2 * this.#siteCount++;
        if (call) {
          call.answered = true;
          answered = true;
          this.#sites[k] = call.site.message;
          this.#sites[k + 1] = call.site.position;
          continue;
        }
        this.#sites[k] = -1;
        this.#sites[k + 1] = -1;
        this.findings.push({ kind: list ? 'duplicate_result' : 'orphan_result', index, position, callId });
      }
      if (this.#roundIndex >= 0 && this.#roundHasCalls && answered) {
        this.#round.set(index, this.#roundIndex);
        this.#bounds[2 * this.#roundIndex + 1] = index;
      } else this.#round.set(index, -1);
      return;
    }
    this.#round.set(index, -1);
    // A user turn (or any other entry) closes the round.
    if (message.role === 'user') this.#closeRound();
  }

  /** `round.at(i)`: the round message `i` belongs to, or -1 outside any (undefined past the last message). */
  get round(): Positional<number> {
    const column = this.#round;
    const length = this.#added;
    return { length, at: (i) => (i >= 0 && i < length ? column.get(i) : undefined) };
  }

  /** Where the call answered by result `position` of message `index` is (undefined for an orphan). */
  callSite(index: number, position: number): ToolSite | undefined {
    if (index < 0 || index >= this.#added || position < 0) return undefined;
    const k = this.#firstSite.get(index) + position;
    if (k >= this.#firstSite.get(index + 1)) return undefined;
    const message = this.#sites[2 * k]!;
    return message < 0 ? undefined : { message, position: this.#sites[2 * k + 1]! };
  }

  /** `callOf.get(i)[r]`: {@link callSite} of every result, by message (built on each read). */
  get callOf(): ReadonlyMap<number, readonly (ToolSite | undefined)[]> {
    const map = new Map<number, (ToolSite | undefined)[]>();
    for (let i = 0; i < this.#added; i++) {
      const count = this.#firstSite.get(i + 1) - this.#firstSite.get(i);
      if (count === 0) continue;
      const sites: (ToolSite | undefined)[] = new Array(count);
      for (let r = 0; r < count; r++) sites[r] = this.callSite(i, r);
      map.set(i, sites);
    }
    return map;
  }

  /** Rounds opened so far. */
  get roundCount(): number {
    return this.#roundCount;
  }

  /** The last message of round `r`. */
  roundEnd(r: number): number {
    return this.#bounds[2 * r + 1]!;
  }

  /** Per round: first and last message index (inclusive), built on each read. */
  get rounds(): { start: number; end: number }[] {
    const out: { start: number; end: number }[] = new Array(this.#roundCount);
    for (let r = 0; r < this.#roundCount; r++)
      out[r] = { start: this.#bounds[2 * r]!, end: this.#bounds[2 * r + 1]! };
    return out;
  }

  /** Closes the open round, reporting its unanswered calls. Call once after the last message. */
  finish(): void {
    this.#closeRound();
  }

  /**
   * The open round's unanswered calls as `dangling_call` findings, without closing the round
   * (a request that ends with them is rejected by every provider).
   */
  openFindings(): PairingFinding[] {
    const out: PairingFinding[] = [];
    for (const [callId, list] of this.#open) {
      for (const c of list) {
        if (!c.answered)
          out.push({ kind: 'dangling_call', index: c.site.message, position: c.site.position, callId });
      }
    }
    return out;
  }

  /** Unanswered calls of the open round (the tail of an interrupted run). */
  openCalls(): ToolSite[] {
    const out: ToolSite[] = [];
    for (const list of this.#open.values()) for (const c of list) if (!c.answered) out.push(c.site);
    return out;
  }

  #openRound(index: number): void {
    this.#closeRound();
    this.#roundIndex = this.#roundCount++;
    this.#bounds = grown(this.#bounds, 2 * this.#roundCount);
    this.#bounds[2 * this.#roundIndex] = index;
    this.#bounds[2 * this.#roundIndex + 1] = index;
    this.#roundHasCalls = false;
  }

  #closeRound(): void {
    for (const [callId, list] of this.#open) {
      for (const c of list) {
        if (!c.answered)
          this.findings.push({
            kind: 'dangling_call',
            index: c.site.message,
            position: c.site.position,
            callId,
          });
      }
    }
    if (this.#open.size > 0) this.#open = new Map();
  }

  /** The pairing so far (closing the open round first when `final`). */
  result(): ToolPairing {
    return {
      round: this.#round.toInt32Array(this.#added),
      rounds: this.rounds,
      callOf: this.callOf,
      findings: [...this.findings].sort((a, b) => a.index - b.index || a.position - b.position),
    };
  }
}

/**
 * Pairs every tool result of `messages` with its call by position (see the module comment).
 *
 * @example
 * ```ts
 * const pairing = pairToolCalls(parsedMessages);
 * for (const finding of pairing.findings) console.warn(finding.kind, finding.index);
 * ```
 */
export function pairToolCalls(messages: readonly PairingInput[]): ToolPairing {
  const pairer = new ToolPairer();
  for (let index = 0; index < messages.length; index++) pairer.add(messages[index]!, index);
  pairer.finish();
  return pairer.result();
}

/** Messages paired between two steps of {@link answeredCallsSteps}. */
const STEP_MESSAGES = 256;

/**
 * The result answering each call of `messages`, keyed `message:position` of the call (the
 * pairing of {@link pairToolCalls}), as steps: one every {@link STEP_MESSAGES} messages while
 * pairing, and again while the answers are read (16k messages paired at once held the loop
 * 20-30 ms, issue 47). Keys are set in the order of the results.
 */
export function* answeredCallsSteps(messages: readonly CompactMessage[]): Steps<Map<string, ToolResult>> {
  const pairer = new ToolPairer();
  for (let index = 0; index < messages.length; index++) {
    if (index % STEP_MESSAGES === STEP_MESSAGES - 1) yield;
    pairer.add(messages[index]!, index);
  }
  pairer.finish();
  yield;
  const answers = new Map<string, ToolResult>();
  for (let index = 0; index < messages.length; index++) {
    if (index % STEP_MESSAGES === STEP_MESSAGES - 1) yield;
    const results = messages[index]!.toolResults;
    for (let r = 0; r < results.length; r++) {
      const site = pairer.callSite(index, r);
      if (site) answers.set(`${site.message}:${site.position}`, results[r]!);
    }
  }
  return answers;
}
