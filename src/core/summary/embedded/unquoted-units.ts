/** The units left once the user sections are written: their quoted words are not said twice. */
import { ChunkedList } from '../../chunked-list.js';
import type { Steps } from '../../time-slice.js';
import type { Unit } from './types.js';

/** The units but the user's own words the head already quotes; a pause every few dozen units. */
export function* unquotedUnitSteps(units: readonly Unit[], head: string): Steps<Unit[]> {
  const quoted = head.toLowerCase();
  const kept = new ChunkedList<Unit>();
  for (let i = 0; i < units.length; i++) {
    if (i % 64 === 63) yield;
    const unit = units[i]!;
    if (unit.source !== 'user' || !quoted.includes(unit.text.toLowerCase())) kept.push(unit);
  }
  return kept.toArray();
}
