/**
 * A cheap fingerprint of a message (issue 47): what a fresh process compares, on a bounded
 * sample of a history's positions, with the record a warm one left (quick-resume.ts) before
 * it trusts the stored counts, as a warm call trusts a bounded sample of its old messages.
 * It reads the message's shape: its keys, short strings (roles, types, ids, names) in full,
 * the length of long ones (text, tool output, arguments), numbers and booleans, down to a
 * few levels. What it does not see, the exact count after the call does (quick-resume.ts).
 */

/** Strings up to this length are read in full (roles, types, ids, tool names). */
const SHORT = 48;
/** Nesting read below a message (content parts, tool calls and their function). */
const DEPTH = 4;

/** A running 64-bit print: two 32-bit lanes. */
export interface Print {
  a: number;
  b: number;
}

/** The print of an empty history. */
export function emptyPrint(): Print {
  return { a: 0x2545f491, b: 0x6c8e9cf5 };
}

function mix(print: Print, value: number): void {
  print.a = Math.imul(print.a ^ value, 0x9e3779b1);
  print.a ^= print.a >>> 15;
  print.b = Math.imul(print.b ^ value, 0x85ebca77) + 0x165667b1;
  print.b ^= print.b >>> 13;
}

function mixString(print: Print, text: string): void {
  mix(print, text.length);
  if (text.length > SHORT) return;
  for (let i = 0; i < text.length; i++) mix(print, text.charCodeAt(i));
}

function mixValue(print: Print, value: unknown, depth: number): void {
  switch (typeof value) {
    case 'string':
      mixString(print, value);
      return;
    case 'number':
      mix(print, value | 0);
      return;
    case 'boolean':
      mix(print, value ? 3 : 2);
      return;
    case 'object':
      if (value === null) mix(print, 1);
      else if (depth >= DEPTH) mix(print, 4);
      else if (Array.isArray(value)) {
        mix(print, 5 + value.length);
        for (const part of value) mixValue(print, part, depth + 1);
      } else {
        mix(print, 6);
        for (const key in value) {
          const field = (value as Record<string, unknown>)[key];
          // As a JSON round trip leaves it (the fresh process's history is read from a store).
          if (field === undefined || typeof field === 'function') continue;
          mixString(print, key);
          mixValue(print, field, depth + 1);
        }
      }
      return;
    default:
      mix(print, 7);
  }
}

/** Adds one message to `print`. */
export function addToPrint(print: Print, message: unknown): void {
  mix(print, 0x51ed27);
  mixValue(print, message, 0);
}

/** The print as stored. */
export function printText(print: Print): string {
  return `${(print.a >>> 0).toString(36)}.${(print.b >>> 0).toString(36)}`;
}

/** The newest messages of a recorded history whose prints are compared. */
const NEWEST = 16;
/** Messages spread evenly over the older history whose prints are compared. */
const PROBES = 16;

/**
 * The positions of a history of `length` messages whose prints a record holds: the newest
 * ones (where a caller's history changes most: a rewind, an edit of the last turn) and a few
 * spread over the older ones (a dropped or inserted message moves them all).
 */
export function samplePositions(length: number): number[] {
  const positions: number[] = [];
  const newest = Math.max(0, length - NEWEST);
  for (let k = 0; k < PROBES && newest > 0; k++) positions.push(Math.floor((k * newest) / PROBES));
  for (let i = newest; i < length; i++) positions.push(i);
  return positions;
}

/** The prints of the messages at {@link samplePositions}`(length)` (`at(i)`: message `i`), as stored. */
export function samplePrints(at: (i: number) => unknown, length: number): string {
  const prints: string[] = [];
  for (const i of samplePositions(length)) {
    const print = emptyPrint();
    addToPrint(print, at(i));
    prints.push(printText(print));
  }
  return prints.join(' ');
}
