/**
 * A JSON round trip of a large session state (`JSON.parse(JSON.stringify(state))`), made a
 * part at a time so that a memory store's copy of a long session's state never holds the
 * event loop in one piece (a 20k-message state of 1.2 MB: stringify, parse and freeze took
 * about 70, 90 and 60 ms each on a loaded machine). The copy is the same as the whole round
 * trip's: each top-level field goes through JSON apart, and a long array or a plain object
 * with many keys (kept ids, rewrites) in chunks of its entries.
 */
import type { Steps } from '../time-slice.js';

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

/** True when `state`'s top-level arrays and plain objects hold more than {@link LARGE_STATE_ENTRIES} entries. */
export function isLargeState(state: object): boolean {
  let entries = 0;
  for (const value of Object.values(state)) {
    if (Array.isArray(value)) entries += value.length;
    else if (isPlainObject(value)) for (const _ in value) if (++entries > LARGE_STATE_ENTRIES) return true;
    if (entries > LARGE_STATE_ENTRIES) return true;
  }
  return false;
}

const roundTrip = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

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
    const copied = roundTrip(chunk) as Record<string, unknown>;
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

/** The same of an array, a slice of elements a step. */
function* arrayCopy(value: readonly unknown[]): Steps<unknown[]> {
  const out: unknown[] = [];
  for (let start = 0; start < value.length; start += CHUNK_ENTRIES) {
    for (const item of roundTrip(value.slice(start, start + CHUNK_ENTRIES)) as unknown[]) out.push(item);
    yield;
  }
  return out;
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
    for (const child of Object.values(next))
      if (typeof child === 'object' && child !== null) stack.push(child);
    if (++frozen % FREEZE_STEP === 0) yield;
  }
  return value;
}
