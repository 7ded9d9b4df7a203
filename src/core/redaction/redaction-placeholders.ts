/**
 * Values after a secret-named key that real code and docs write and that hold no secret:
 * placeholders (`<your-api-key>`, `sk-lf-...`, `"my-top-secret"`, `dbpassword`), prose
 * (`pass: valid JS source is always analyzed correctly`), namespaces (`auth:login`), CORS
 * modes (`credentials: 'include'`) and code the value rules of `redaction-values.ts` do not
 * read as code (multi-line literals and calls, arrow functions, comparisons, indexes, chained
 * assignments, camelCase names). Measured on the npm code and READMEs vendored in
 * test/fixtures/redaction/real-text (issue 44: at most one false alarm per MB).
 */

const SECRET_WORDS = /^(?:my|your)?(?:token|password|passwd|secret|key|api[_-]?key|credentials?)s?$/i;
const PLACEHOLDER_LEAD =
  /^(?:your|my|some|fallback|example|dummy|sample|fake|changeme|replace|use|xxx+)[-_]/i;
const STOP_WORDS = new Set(
  'a an the to of and or but is are was be has have not for with from by in on as it this that always all any'.split(
    ' ',
  ),
);
const CORS_MODES = /^(?:include|omit|same-origin)$/;

/** `<...>`, `...`, `your-...`, words that name a secret (`password-for-30001`, `TOKEN`, `myToken`). */
export function looksLikePlaceholder(value: string, key: string): boolean {
  // `<your-api-key>`, an ABNF rule `1*<any CHAR except CTLs>`, `sk-lf-...` (three dots: `…`
  // is how the library's own clips end, after a secret's real head).
  if (/^\d{0,2}\*?<[^<>]{1,80}>/.test(value) || /^[\w-]{0,12}\.\.\.$/.test(value)) return true;
  if (PLACEHOLDER_LEAD.test(value)) return true;
  const words = value.split(/[-_ ]+/);
  if (words.length >= 2 && words.every((word) => /^[a-z]*[0-9]*$/i.test(word))) {
    if (words.some((word) => SECRET_WORDS.test(word))) return true;
  }
  if (SECRET_WORDS.test(words[0] ?? '')) return true;
  // `password = dbpassword`: lower-case letters that end with the key's own word.
  const word = /pass(?:word|wd)?|secret|token/i.exec(key)?.[0]?.toLowerCase();
  if (word && /^[a-z]{1,16}$/.test(value) && value.endsWith(word)) return true;
  return CORS_MODES.test(value) && /credentials$/i.test(key);
}

/** A line of prose: five words or more, two of them function words. */
export function looksLikeProse(text: string): boolean {
  const words = text.trim().split(/\s+/);
  if (words.length < 5) return false;
  return words.filter((word) => STOP_WORDS.has(word.toLowerCase())).length >= 2;
}

/** A name made of words, camelCase or snake_case (`kEnumerableProperty`, `p_token`). */
const WORDS = /^[a-z]?(?:[A-Z]{2,8}(?![a-z])|[A-Z]?[a-z]{2,}|[0-9]{1,2}|[_$])+$/;
/**
 * A strict camelCase name: lower-case head, then humps of a capital and two lower-case letters
 * or more (`hasLegacyRepeatableKeyShape`); random key material (`AqrAAAwyAAAA`) is not one.
 */
export const wordyName = (name: string) => /^[a-z]{1,24}(?:[A-Z][a-z]{2,24}){1,8}$/.test(name);
const PATH = /^[A-Za-z_$][\w$]{0,63}(?:\??\.[A-Za-z_$][\w$]{0,63}){0,8}/;

/**
 * Code after `key =` or `key:` (`rest`: the value to the end of its line) that the code rules
 * of `redaction-values.ts` miss.
 */
export function looksLikeMoreCode(rest: string, key: string): boolean {
  const line = rest.trimEnd();
  // A literal or call that goes on over the next lines: `[`, `{`, `x.y([`.
  if (/^(?:[[{(]|\(\[|\(\{)$/.test(line)) return true;
  if (/^\([\w$, ]{0,128}\)\s{0,4}=>/.test(line) || /^(?:async\s+)?function\b/.test(line)) return true;
  // An object literal (`{ token: "TOKEN" }`).
  if (/^\{\s/.test(line)) return true;
  // A comment first (`/** @type {const} */ ([...])`).
  if (line.startsWith('/*')) return true;
  const path = PATH.exec(line)?.[0];
  if (path === undefined) return false;
  const after = line.slice(path.length);
  const parts = path.split(/\??\./);
  if (/^\s{0,4}(?:&&|\|\||\?\?|===?|!==?)\s/.test(after)) return true;
  // A chained assignment (`exports.TOKEN = exports.STRICT_TOKEN = [`), not `sid=abc` of a cookie.
  if (/^\s{1,4}=(?:\s|$)/.test(after)) return true;
  if (/^[([]{1,2}$/.test(after) && parts.every((part) => WORDS.test(part))) return true;
  // A call of a camelCase name with names for arguments: `lastTokenOf(messages);`.
  const camel = (part: string) => /^[a-z][a-z]{1,}(?:[A-Z][a-z]{0,}){1,6}$/.test(part);
  if (/^\((?:[\w$.]{1,64}(?:,\s?[\w$.]{1,64}){0,8})?\)[\s;,)]*$/.test(after) && parts.every(camel))
    return true;
  // An index with a simple expression: `tokens[i]`, `ARGV[2]`, `header[i - 1].trim()`.
  if (/^\[[\w$ +\-*/.]{1,32}\](?:\.[A-Za-z_$][\w$]{0,63}\(\))?[\s;,)]*$/.test(after)) return true;
  const ends = /^\s{0,4}(?:[;,)\]}]|$)/.test(after);
  if (!ends) return false;
  const word = /pass|secret|token|key|auth|cred|cookie|connection/i.exec(key)?.[0]?.toLowerCase();
  // `init.credentials`, `p_token`: a name that holds the key's own word.
  const last = parts.at(-1)!;
  if (word && last.toLowerCase().includes(word) && (parts.length >= 2 || WORDS.test(last))) return true;
  if (parts.length === 1 && wordyName(path)) return true;
  return parts.length === 1 && /^[a-z]{4,24}$/.test(path) && /^\s{0,4}[;,]/.test(after);
}
