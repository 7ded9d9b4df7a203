/**
 * A compacted body written from the client's own bytes: everything outside the conversation,
 * and every message the manager sent as the client wrote it, is copied from the request; only
 * the messages it rewrote (the summary, a cleared result, a message given a cache mark) are
 * serialized. A body whose other fields changed too is left to `JSON.stringify`.
 */
import { runSteps, runStepsYielding, type Steps, type TimeSlice } from '../../core/time-slice.js';
import type { ParsedRequest } from './parsed-bodies.js';

const COMMA = Buffer.from(',');
/** Messages walked between two steps. */
const STEP_MESSAGES = 512;
/** Bytes copied between two steps (a 20 MB body copied at once held the loop several ms). */
const STEP_BYTES = 1 << 20;

/** `next` (the request with the manager's messages under `key`) as bytes, or `undefined` when it cannot be spliced. */
export function spliceBody(
  parsed: ParsedRequest,
  key: string,
  next: Record<string, unknown>,
): Buffer | undefined {
  return runSteps(spliceBodySteps(parsed, key, next));
}

/** {@link spliceBody} in slices of the loop (the same bytes). */
export function spliceBodyInSlices(
  parsed: ParsedRequest,
  key: string,
  next: Record<string, unknown>,
  slice?: TimeSlice,
  signal?: AbortSignal,
): Promise<Buffer | undefined> {
  return runStepsYielding(spliceBodySteps(parsed, key, next), slice, signal);
}

/** {@link spliceBody} as steps: the walk yields every {@link STEP_MESSAGES} messages, the copy every {@link STEP_BYTES}. */
export function* spliceBodySteps(
  parsed: ParsedRequest,
  key: string,
  next: Record<string, unknown>,
): Steps<Buffer | undefined> {
  const { layout, bytes, body } = parsed;
  const messages = next[key];
  if (layout === undefined || !Array.isArray(messages)) return undefined;
  const names = Object.keys(next);
  if (names.length !== Object.keys(body).length) return undefined;
  for (const name of names) if (name !== key && next[name] !== body[name]) return undefined;
  const original = body[key] as unknown[];
  // Where each original message is: most follow the one before, so the map is built only
  // for a message that does not (a message moved, or the view's summary before them).
  let at: Positions | undefined;
  const pieces: Buffer[] = [];
  // Messages kept in a row are one run of the client's bytes (their commas included): a few
  // pieces to copy, not one per message.
  let runFrom = 0;
  let runTo = layout.start + 1;
  let last = -2;
  for (let k = 0; k < messages.length; k++) {
    if (k % STEP_MESSAGES === STEP_MESSAGES - 1) yield;
    const message = messages[k];
    let i: number | undefined = last + 1;
    if (i < 0 || original[i] !== message) {
      at ??= yield* positionsSteps(original);
      i = at.get(message);
    }
    if (i !== undefined && i === last + 1 && k > 0) {
      runTo = layout.ends[i]!;
      last = i;
      continue;
    }
    pieces.push(bytes.subarray(runFrom, runTo));
    if (k > 0) pieces.push(COMMA);
    last = i ?? -2;
    if (i === undefined) {
      pieces.push(Buffer.from(JSON.stringify(message) ?? 'null'));
      runFrom = runTo = 0;
    } else {
      runFrom = i === 0 ? layout.start + 1 : layout.ends[i - 1]! + 1;
      runTo = layout.ends[i]!;
    }
  }
  pieces.push(bytes.subarray(runFrom, runTo), bytes.subarray(layout.end));
  return yield* joined(pieces);
}

/** Messages placed in the map of {@link positionsSteps} between two steps. */
const STEP_POSITIONS = 4096;

/** A map of positions by message, in tables of {@link STEP_POSITIONS} messages each. */
class Positions {
  readonly #tables: Map<unknown, number>[] = [];

  add(message: unknown, i: number): void {
    if (i % STEP_POSITIONS === 0) this.#tables.push(new Map());
    this.#tables.at(-1)!.set(message, i);
  }

  /** The message's last position (as one map set in order would give). */
  get(message: unknown): number | undefined {
    for (let t = this.#tables.length - 1; t >= 0; t--) {
      const i = this.#tables[t]!.get(message);
      if (i !== undefined) return i;
    }
    return undefined;
  }
}

/**
 * Each message's position in `original`, a step every {@link STEP_POSITIONS} messages (a map
 * of 200k messages built at once, for the summary in front of a compacted view, held the loop
 * 20 ms), in tables of that many: one `Map` of 300k grew in a single `set` that held it ~17 ms.
 * Looked up only for a message that does not follow the one before (a few a request).
 */
function* positionsSteps(original: readonly unknown[]): Steps<Positions> {
  const at = new Positions();
  for (let i = 0; i < original.length; i++) {
    at.add(original[i], i);
    if (i % STEP_POSITIONS === STEP_POSITIONS - 1) yield;
  }
  return at;
}

/** `Buffer.concat(pieces)`, copied {@link STEP_BYTES} at a time. */
function* joined(pieces: readonly Buffer[]): Steps<Buffer> {
  let length = 0;
  for (const piece of pieces) length += piece.length;
  const out = Buffer.allocUnsafe(length);
  let offset = 0;
  let sinceStep = 0;
  for (const piece of pieces) {
    for (let from = 0; from < piece.length; ) {
      const to = Math.min(piece.length, from + STEP_BYTES - sinceStep);
      piece.copy(out, offset, from, to);
      offset += to - from;
      sinceStep += to - from;
      from = to;
      if (sinceStep >= STEP_BYTES) {
        sinceStep = 0;
        yield;
      }
    }
  }
  return out;
}
