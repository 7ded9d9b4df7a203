/**
 * A JSON round trip of a large session state (`JSON.parse(JSON.stringify(state))`), made a
 * part at a time so that a memory store's copy of a long session's state never holds the
 * event loop in one piece (a 20k-message state of 1.2 MB: stringify, parse and freeze took
 * about 70, 90 and 60 ms each on a loaded machine). The copy is the same as the whole round
 * trip's: each top-level field goes through JSON apart, and a long array or a plain object
 * with many keys (kept ids, rewrites) in chunks of its entries.
 */
import { ChunkedList } from '../chunked-list.js';
import type { Steps } from '../time-slice.js';
import { isPackedField, packedShapesOf, valuesToFreeze } from './packed-state.js';

/** Entries of the state's arrays and plain objects past which it is copied in parts. */
export const LARGE_STATE_ENTRIES = 2_048;

/** Entries of one array or object that go through JSON together. */
const CHUNK_ENTRIES = 256;

/** Objects frozen between two steps. */
const FREEZE_STEP = 1_024;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return (
    (proto === Object.prototype || proto === null) &&
    typeof (value as { toJSON?: unknown }).toJSON !== 'function'
  );
}

/**
 * Characters of the strings at the state's top level and in its plain objects past which it is
 * copied in parts (the parts share strings: a stored counts record of 200k messages, 3 MB of
 * hashes in one string, took 10 ms through JSON at once).
 */
export const LARGE_STATE_CHARS = 256 * 1024;

/**
 * True when `state`'s top-level arrays and plain objects hold more than
 * {@link LARGE_STATE_ENTRIES} entries, or its strings there more than {@link LARGE_STATE_CHARS}.
 */
export function isLargeState(state: object): boolean {
  // A state read from its packed form: its packed lists by their counts, not read.
  const packed = packedShapesOf(state);
  let entries = 0;
  let chars = 0;
  const charsOf = (value: unknown) => (typeof value === 'string' ? value.length : 0);
  for (const shape of Object.values(packed ?? {})) entries += shape.count;
  for (const key of Object.keys(state)) {
    if (packed !== undefined && isPackedField(state, key)) continue;
    const value = (state as Record<string, unknown>)[key];
    chars += charsOf(value);
    if (Array.isArray(value)) entries += value.length;
    else if (isPlainObject(value))
      for (const inner in value) {
        chars += charsOf(value[inner]);
        if (++entries > LARGE_STATE_ENTRIES) return true;
      }
    if (entries > LARGE_STATE_ENTRIES || chars > LARGE_STATE_CHARS) return true;
  }
  return false;
}

const roundTrip = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

/** A value {@link flatCopy} cannot copy as JSON would (then the chunk takes the round trip). */
const NOT_FLAT = Symbol('not flat');

/**
 * `value` as its JSON round trip gives it, for a string, boolean, null or number, or a plain
 * record of those: the strings shared, not copied (they are immutable, so no one can tell).
 * A round trip made a new string of every kept id and rewrite ref and hash of a long state,
 * each one more object for the scavenges of a cold call (issue 47). Anything else:
 * {@link NOT_FLAT}.
 */
function flatCopy(value: unknown, inRecord = false): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      // JSON writes -0 as 0 and a non-finite number as null.
      return Number.isFinite(value) ? value + 0 : null;
    case 'object': {
      if (value === null) return null;
      if (inRecord || !isPlainObject(value)) return NOT_FLAT;
      if (isFrozenJsonRecord(value)) return value;
      const out: Record<string, unknown> = {};
      for (const key of Object.keys(value)) {
        const field = (value as Record<string, unknown>)[key];
        if (field === undefined) continue;
        const copied = flatCopy(field, true);
        if (copied === NOT_FLAT || key === '__proto__') return NOT_FLAT;
        out[key] = copied;
      }
      return out;
    }
    default:
      return NOT_FLAT;
  }
}

/**
 * True for a frozen plain record that its JSON round trip would give back field for field:
 * every own property enumerable, a string key other than `__proto__`, its value a string, a
 * boolean, null or a finite number other than -0. Nothing can change it, so a copy would be
 * indistinguishable from it but for identity: it is kept as it is, not copied (the session
 * state's rewrite records, frozen by next-state.ts: a copy of each was one more object per
 * rewritten message for the scavenges of a cold call, issue 47).
 */
function isFrozenJsonRecord(value: Record<string, unknown>): boolean {
  if (!Object.isFrozen(value)) return false;
  const keys = Reflect.ownKeys(value);
  for (const key of keys) {
    if (typeof key !== 'string' || key === '__proto__') return false;
    const descriptor = Object.getOwnPropertyDescriptor(value, key);
    if (descriptor === undefined || !descriptor.enumerable || !('value' in descriptor)) return false;
    const field = descriptor.value as unknown;
    if (typeof field === 'string' || typeof field === 'boolean' || field === null) continue;
    if (typeof field !== 'number' || !Number.isFinite(field) || Object.is(field, -0)) return false;
  }
  return true;
}

/** `target[key] = value` as `JSON.parse` makes it: an own property, even for `__proto__`. */
function put(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/** `JSON.parse(JSON.stringify(value))` of a plain object with many keys, a chunk of keys a step. */
function* objectCopy(value: Record<string, unknown>): Steps<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  let chunk: Record<string, unknown> = {};
  let size = 0;
  const flush = () => {
    const copied = flatRecords(chunk) ?? (roundTrip(chunk) as Record<string, unknown>);
    for (const key in copied) put(out, key, copied[key]);
    chunk = {};
    size = 0;
  };
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    put(chunk, key, value[key]);
    if (++size === CHUNK_ENTRIES) {
      flush();
      yield;
    }
  }
  if (size > 0) flush();
  return out;
}

/** `chunk` copied by {@link flatCopy} when every value of it can be, else undefined. */
function flatRecords(chunk: Record<string, unknown>): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  for (const key in chunk) {
    const value = chunk[key];
    if (value === undefined) continue;
    const copied = flatCopy(value);
    if (copied === NOT_FLAT || key === '__proto__') return undefined;
    out[key] = copied;
  }
  return out;
}

/** The same of an array, a slice of elements a step. */
function* arrayCopy(value: readonly unknown[]): Steps<unknown[]> {
  // Pushed, not `new Array(length)`: past ~100k that is a dictionary-mode array (slow to fill
  // and to read, 300k covered ids: issue 47); in chunks, made one array at its size at the end
  // (one array grown by `push` copied itself whole at each growth).
  const out = new ChunkedList<unknown>();
  for (let start = 0; start < value.length; start += CHUNK_ENTRIES) {
    const end = Math.min(value.length, start + CHUNK_ENTRIES);
    let flat = true;
    for (let i = start; i < end && flat; i++) {
      const copied = flatCopy(value[i]);
      if (copied === NOT_FLAT) flat = false;
      else out.push(copied);
    }
    if (!flat) {
      out.truncate(start);
      const copied = roundTrip(value.slice(start, end)) as unknown[];
      for (let i = start; i < end; i++) out.push(copied[i - start]);
    }
    yield;
  }
  return out.toArray();
}

/**
 * `JSON.parse(JSON.stringify(state))` of a plain state object, a part per step: the same
 * fields in the same order, each value as its own round trip gives it.
 */
export function* jsonCopySteps<T extends object>(state: T): Steps<T> {
  if (!isPlainObject(state)) return roundTrip(state) as T;
  const out: Record<string, unknown> = {};
  for (const key in state) {
    if (!Object.hasOwn(state, key)) continue;
    const value = (state as Record<string, unknown>)[key];
    if (Array.isArray(value) && value.length > CHUNK_ENTRIES) put(out, key, yield* arrayCopy(value));
    else if (isPlainObject(value)) put(out, key, yield* objectCopy(value));
    else {
      // A field JSON leaves out (undefined, a function) is left out here too.
      const copied = JSON.stringify({ value });
      const parsed = (JSON.parse(copied) as { value?: unknown }).value;
      if (copied !== '{}') put(out, key, parsed);
    }
    yield;
  }
  return out as T;
}

/** Freezes every object and array in `value` (as `deepFreeze`), yielding every {@link FREEZE_STEP} objects. */
export function* deepFreezeSteps<T>(value: T): Steps<T> {
  const stack: unknown[] = [value];
  let frozen = 0;
  while (stack.length > 0) {
    const next = stack.pop();
    if (typeof next !== 'object' || next === null || Object.isFrozen(next)) continue;
    Object.freeze(next);
    if (Array.isArray(next)) {
      // By index, a step every FREEZE_STEP elements: a state's 300k covered ids were one
      // 17 ms stretch (`Object.values`' copy, then the look at each). A copy's arrays are dense,
      // with no other own properties.
      for (let i = 0; i < next.length; i++) {
        const child: unknown = next[i];
        if (typeof child === 'object' && child !== null) stack.push(child);
        if (i % FREEZE_STEP === FREEZE_STEP - 1) yield;
      }
    } else {
      for (const child of valuesToFreeze(next))
        if (typeof child === 'object' && child !== null) stack.push(child);
    }
    if (++frozen % FREEZE_STEP === 0) yield;
  }
  return value;
}
