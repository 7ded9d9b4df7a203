/**
 * A long state's summary as written to a store outside the process (packed-state.ts): its
 * characters that are not ASCII (and its backslashes) written as `\uXXXX`, so the stored JSON
 * is ASCII. One arrow in a summary made the whole state's JSON text (430 KB for a compacted
 * 16k-message session) decode to a two-byte string on every read: about 1.3 ms more of a
 * fresh process's first call to decode, 0.3 ms more to parse (bench/cold-process.ts). The
 * summary carries `ascii: { version, chars }` (the state's version and the written text's
 * length); a summary that no longer matches it (a writer that does not pack wrote another
 * text and carried the mark along) is read as it is: the text written last wins.
 */
import type { SessionSummary } from './session-state.js';

/** The mark of a summary written in ASCII. */
interface AsciiMark {
  readonly version: number;
  readonly chars: number;
}

type MarkedSummary = SessionSummary & { ascii?: unknown };

const ASCII_ONLY = /^[\x00-\x7f]*$/;
// Every character but ASCII other than the backslash: in the written text each backslash opens an escape.
const ESCAPED = /[^\x00-\x5b\x5d-\x7f]/g;
const ESCAPE = /\\u([0-9a-f]{4})/g;

const escapeOf = (ch: string) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;
const fromEscape = (_: string, hex: string) => String.fromCharCode(Number.parseInt(hex, 16));

/** The summary as written by a state of `version` (itself when its text is ASCII). */
export function asciiSummary(summary: SessionSummary, version: number): SessionSummary {
  if (typeof summary?.text !== 'string' || ASCII_ONLY.test(summary.text)) return summary;
  const text = summary.text.replace(ESCAPED, escapeOf);
  const mark: AsciiMark = { version, chars: text.length };
  return { ...summary, text, ascii: mark } as SessionSummary;
}

/** The summary as read from a state of `version`: its text as it was when it carries a mark that holds. */
export function readAsciiSummary(summary: unknown, version: unknown): unknown {
  if (typeof summary !== 'object' || summary === null || !('ascii' in summary)) return summary;
  const { ascii, ...rest } = summary as MarkedSummary;
  const mark = ascii as Partial<AsciiMark> | null;
  const text = rest.text;
  if (
    typeof text === 'string' &&
    mark?.version === version &&
    mark?.chars === text.length &&
    ASCII_ONLY.test(text)
  )
    rest.text = text.replace(ESCAPE, fromEscape);
  return rest;
}
