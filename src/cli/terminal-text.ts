/**
 * Text for a terminal: control characters a file or a model may carry (ESC sequences that
 * recolour, move the cursor or set the window title, NUL, backspace, carriage return, C1
 * controls) and the bidirectional overrides that reorder what a reader sees (U+202E) are
 * made visible as `\u{...}` escapes. Newlines and tabs stay. JSON output is never passed
 * through this: it stays byte-exact.
 */

// C0 controls but tab and newline, DEL, C1 controls, the bidi marks, embeddings, overrides
// and isolates, and the line and paragraph separators (which break a line on some terminals).
const UNSAFE =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** `text` with every terminal control character replaced by its visible `\u{XX}` escape. */
export function terminalText(text: string): string {
  return text.replace(UNSAFE, (char) => `\\u{${char.charCodeAt(0).toString(16).padStart(2, '0')}}`);
}

/** True when colour may be used: a terminal, and neither `NO_COLOR` nor `TERM=dumb` set. */
export function colorAllowed(env: Record<string, string | undefined>, isTTY: boolean): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.TERM === 'dumb') return false;
  return isTTY;
}

// What JSON.stringify leaves raw but a terminal acts on: DEL, C1 controls, the bidi marks,
// embeddings, overrides and isolates, and the line and paragraph separators.
const JSON_UNSAFE = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * JSON text for a terminal: the characters above (found only inside its strings, since JSON's
 * own syntax is ASCII) become `\uXXXX` escapes, so the text parses to exactly the same value.
 */
export function jsonTerminalText(text: string): string {
  return text.replace(JSON_UNSAFE, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
