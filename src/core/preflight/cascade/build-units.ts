/**
 * Units are what the cascade keeps or folds as a whole: one pairing round (a model turn
 * with its calls, their results and the reasoning before them) or one other message. Rounds
 * are contiguous by construction (a result only answers a call of its own round), so a
 * unit never spans another.
 */
import { ChunkedList, type Positional } from '../../chunked-list.js';
import { runSteps, type Steps } from '../../time-slice.js';
import type { ViewEntry } from '../view/session-view.js';

/** A unit of the unpinned view. */
export interface Unit {
  /** Positions in the entry list, ascending and contiguous. */
  start: number;
  end: number;
  /** True for a round with tool calls. */
  tool: boolean;
  /** True when the unit opens a user turn. */
  startsTurn: boolean;
  tokens: number;
}

/** Groups `entries` (the unpinned view, in order) into units. */
export function buildUnits(entries: Positional<ViewEntry>): Unit[] {
  return runSteps(buildUnitsSteps(entries));
}

/** Entries read between two steps of {@link buildUnitsSteps}. */
const STEP_ENTRIES = 1_024;

/** {@link buildUnits} as steps, one every {@link STEP_ENTRIES} entries. */
export function* buildUnitsSteps(entries: Positional<ViewEntry>): Steps<Unit[]> {
  // Gathered in chunks, made one array at its size at the end (300k units grew it by copies).
  const units = new ChunkedList<Unit>();
  for (let k = 0; k < entries.length; k++) {
    if (k % STEP_ENTRIES === STEP_ENTRIES - 1) yield;
    const entry = entries.at(k)!;
    const parsed = entry.item.entry.parsed;
    const last = units.at(units.length - 1);
    if (entry.round >= 0 && last && entries.at(last.end)!.round === entry.round) {
      last.end = k;
      last.tokens += entry.tokens;
      if (parsed.toolCalls.length > 0 || parsed.toolResults.length > 0) last.tool = true;
      continue;
    }
    units.push({
      start: k,
      end: k,
      tool: parsed.toolCalls.length > 0 || parsed.toolResults.length > 0,
      startsTurn: parsed.role === 'user' && parsed.toolResults.length === 0,
      tokens: entry.tokens,
    });
  }
  yield;
  return units.toArray();
}

/**
 * The first unit of the verbatim suffix under the policy: the longest suffix holding at most
 * `keepTurns` user turns and at most `keepPairs` tool rounds (always at least the last unit).
 */
export function policySuffixStart(units: readonly Unit[], keepTurns: number, keepPairs: number): number {
  let turns = 0;
  let pairs = 0;
  let start = units.length;
  for (let u = units.length - 1; u >= 0; u--) {
    const unit = units[u]!;
    const t = turns + (unit.startsTurn ? 1 : 0);
    const p = pairs + (unit.tool ? 1 : 0);
    if (start < units.length && (t > keepTurns || p > keepPairs)) break;
    turns = t;
    pairs = p;
    start = u;
    // The turn that completes the quota opens the suffix: nothing of the turn before it.
    if (unit.startsTurn && turns >= keepTurns) break;
  }
  return Math.min(start, Math.max(0, units.length - 1));
}
