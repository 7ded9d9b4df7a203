/**
 * A compacted body written from the client's own bytes: everything outside the conversation,
 * and every message the manager sent as the client wrote it, is copied from the request; only
 * the messages it rewrote (the summary, a cleared result, a message given a cache mark) are
 * serialized. A body whose other fields changed too is left to `JSON.stringify`.
 */
import type { ParsedRequest } from './parsed-bodies.js';

const COMMA = Buffer.from(',');

/** `next` (the request with the manager's messages under `key`) as bytes, or `undefined` when it cannot be spliced. */
export function spliceBody(
  parsed: ParsedRequest,
  key: string,
  next: Record<string, unknown>,
): Buffer | undefined {
  const { layout, bytes, body } = parsed;
  const messages = next[key];
  if (layout === undefined || !Array.isArray(messages)) return undefined;
  const names = Object.keys(next);
  if (names.length !== Object.keys(body).length) return undefined;
  for (const name of names) if (name !== key && next[name] !== body[name]) return undefined;
  const original = body[key] as unknown[];
  // Where each original message is: most follow the one before, so the map is built only
  // for a message that does not (a message moved).
  let at: Map<unknown, number> | undefined;
  const indexOf = (message: unknown, next: number): number | undefined => {
    if (next >= 0 && original[next] === message) return next;
    if (at === undefined) {
      at = new Map();
      for (let i = 0; i < original.length; i++) at.set(original[i], i);
    }
    return at.get(message);
  };
  const pieces: Buffer[] = [];
  // Messages kept in a row are one run of the client's bytes (their commas included): a few
  // pieces to copy, not one per message.
  let runFrom = 0;
  let runTo = layout.start + 1;
  let last = -2;
  messages.forEach((message, k) => {
    const i = indexOf(message, last + 1);
    if (i !== undefined && i === last + 1 && k > 0) {
      runTo = layout.ends[i]!;
      last = i;
      return;
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
  });
  pieces.push(bytes.subarray(runFrom, runTo), bytes.subarray(layout.end));
  return Buffer.concat(pieces);
}
