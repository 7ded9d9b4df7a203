/**
 * The `key = value` rule's match for its plainest shape, read by hand instead of by its regex
 * (issue 44 point 5: `password=b secret=c` dense in hostile text): a key word alone, `=` or
 * `:` glued to both sides, a value of letters and digits that ends the text or is followed by
 * another assignment. Any other shape is left to the regex (undefined). A property test
 * (test/redaction/key-value-match.test.ts) checks it equals the regex wherever it answers.
 */

/** Key words that match the rule's key alternation whole (`pass` is left out: a lookbehind). */
const SIMPLE_KEYS = new Set(
  'password passwd passphrase pwd secret token apikey api_key api-key secretkey secret_key secret-key auth jwt credential credentials authorization'.split(
    ' ',
  ),
);
/** The scheme words the value pattern may start with (`token abc`): left to the regex. */
const SCHEMES = new Set(['bearer', 'basic', 'token', 'digest']);

/** `text.charCodeAt(index)`, or -1 past the end. */
const codeAt = (text: string, index: number) => (index < text.length ? text.charCodeAt(index) : -1);
const isLetter = (code: number) => (code | 32) >= 97 && (code | 32) <= 122;
const isDigit = (code: number) => code >= 48 && code <= 57;
const isBlank = (code: number) => code === 32 || code === 9;

/**
 * The rule's regex result at `at` (whole match, key, separator) when the text there has the
 * plain shape, else undefined (ask the regex).
 */
export function keyValueMatchAt(text: string, at: number): [string, string, string] | undefined {
  let keyEnd = at;
  while (keyEnd - at <= 13) {
    const code = codeAt(text, keyEnd);
    if (!isLetter(code) && code !== 95 && code !== 45) break;
    keyEnd++;
  }
  const separator = codeAt(text, keyEnd);
  const next = codeAt(text, keyEnd + 1);
  if (separator !== 61 && separator !== 58) return undefined;
  if (!isLetter(next) && !isDigit(next)) return undefined;
  const key = text.slice(at, keyEnd);
  if (!SIMPLE_KEYS.has(key.toLowerCase())) return undefined;
  const from = keyEnd + 1;
  let end = from;
  while (end - from < 1024 && (isLetter(codeAt(text, end)) || isDigit(codeAt(text, end)))) end++;
  if (end - from >= 1024) return undefined;
  if (end < text.length) {
    if (!assignmentAt(text, end)) return undefined;
    if (end - from <= 6 && isBlank(codeAt(text, end)) && SCHEMES.has(text.slice(from, end).toLowerCase()))
      return undefined;
  }
  return [text.slice(at, end), key, separator === 61 ? '=' : ':'];
}

/**
 * The rule's next-assignment lookahead holds at `at`:
 * `[ \t,;&]{1,4}[A-Za-z_][\w.-]{0,63}[ \t]{0,4}(?::=|=>|=(?!=)|:[ \t])` (each run is read
 * whole: the character after it never goes on the one before).
 */
function assignmentAt(text: string, at: number): boolean {
  let index = at;
  while (index - at <= 4) {
    const code = codeAt(text, index);
    if (!(isBlank(code) || code === 44 || code === 59 || code === 38)) break;
    index++;
  }
  if (index === at || index - at > 4) return false;
  const name = index;
  const head = codeAt(text, index);
  if (!isLetter(head) && head !== 95) return false;
  index++;
  while (index - name <= 64) {
    const code = codeAt(text, index);
    if (!(isLetter(code) || isDigit(code) || code === 95 || code === 46 || code === 45)) break;
    index++;
  }
  if (index - name > 64) return false;
  const blanks = index;
  while (index - blanks <= 4 && isBlank(codeAt(text, index))) index++;
  if (index - blanks > 4) return false;
  const operator = codeAt(text, index);
  const after = codeAt(text, index + 1);
  if (operator === 61) return after !== 61;
  return operator === 58 && (after === 61 || isBlank(after));
}
