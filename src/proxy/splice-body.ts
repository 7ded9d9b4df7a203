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
  const at = new Map<unknown, number>();
  original.forEach((message, i) => {
    at.set(message, i);
  });
  const pieces: Buffer[] = [bytes.subarray(0, layout.start + 1)];
  messages.forEach((message, k) => {
    if (k > 0) pieces.push(COMMA);
    const i = at.get(message);
    if (i === undefined) pieces.push(Buffer.from(JSON.stringify(message) ?? 'null'));
    else pieces.push(bytes.subarray(i === 0 ? layout.start + 1 : layout.ends[i - 1]! + 1, layout.ends[i]));
  });
  pieces.push(bytes.subarray(layout.end));
  return Buffer.concat(pieces);
}
