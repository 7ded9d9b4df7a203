/**
 * What a match of a redaction rule becomes: a `key = value` match keeps its key, separator and
 * quotes around `<REDACTED>`; a URL's credentials keep the text around them; anything else is
 * replaced whole.
 */
import { onProcessCachesRelease } from '../process-caches.js';

/** The replacement written in place of a secret. */
export const REDACTED = '<REDACTED>';

/** What follows `<REDACTED>` in an assignment: nothing, or the quote of a quoted value (open, closed). */
const ASSIGNMENT_FORMS = [
  ['', ''],
  ['"', ''],
  ['"', '"'],
  ["'", ''],
  ["'", "'"],
] as const;
/**
 * The last assignments built (key, separator, form, text), at most 16, looked up by string
 * equality: text dense with keys (`token=a password=b ...`, `auth="auth="...`) builds each
 * once, and its fresh key strings are never hashed into a map.
 */
const ASSIGNMENTS: { key: string; separator: string; form: number; built: string }[] = [];
let nextAssignment = 0;
// Their keys are slices of the texts redacted: dropped when the last manager shuts down.
onProcessCachesRelease(() => {
  ASSIGNMENTS.length = 0;
  nextAssignment = 0;
});

/** `key`, `separator`, then `<REDACTED>` in form `form` of {@link ASSIGNMENT_FORMS}. */
function assignment(key: string, separator: string, form: number): string {
  for (let index = 0; index < ASSIGNMENTS.length; index++) {
    const known = ASSIGNMENTS[index]!;
    if (known.form === form && known.key === key && known.separator === separator) return known.built;
  }
  const [open, close] = ASSIGNMENT_FORMS[form]!;
  const built = `${key}${separator}${open}${REDACTED}${close}`;
  ASSIGNMENTS[nextAssignment] = { key, separator, form, built };
  nextAssignment = (nextAssignment + 1) % 16;
  return built;
}

/**
 * The replacement of one match: `groups` are the rule's capture groups (a key and a separator, or
 * the text around a URL's credentials).
 */
export function replaceMatch(match: string, groups: readonly unknown[]): string {
  const key = groups[0];
  const separator = groups[1];
  if (typeof key === 'string' && typeof separator === 'string') {
    if (match.startsWith(key) && match.startsWith(separator, key.length)) {
      const from = key.length + separator.length;
      const head = match.charCodeAt(from);
      // Keep the quotes around a quoted value so JSON text stays JSON (unless it was clipped),
      // escaped at any depth (`\"`, `\\\"`).
      const escaped = head === 92 ? /^\\+"/.exec(match.slice(from))?.[0] : undefined;
      if (escaped) {
        const closed = match.length - from > 2 * escaped.length - 1 && match.endsWith(escaped);
        return `${key}${separator}${escaped}${REDACTED}${closed ? escaped : ''}`;
      }
      if (head === 34 || head === 39) {
        const closed = match.length - from > 1 && match.charCodeAt(match.length - 1) === head;
        return assignment(key, separator, (head === 34 ? 1 : 3) + (closed ? 1 : 0));
      }
      // A bare value runs to the line's end or the next assignment: its trailing blanks stay.
      let blanks = match.length;
      while (blanks > from && (match.charCodeAt(blanks - 1) === 32 || match.charCodeAt(blanks - 1) === 9))
        blanks--;
      return blanks === match.length
        ? assignment(key, separator, 0)
        : `${key}${separator}${REDACTED}${match.slice(blanks)}`;
    }
    // Two groups around the secret (a URL's `scheme://user:` and `@`).
    if (match.startsWith(key) && match.endsWith(separator)) return `${key}${REDACTED}${separator}`;
  }
  return REDACTED;
}
