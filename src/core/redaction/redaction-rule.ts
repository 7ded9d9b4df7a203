/** One default redaction rule (see `redaction-rules.ts` for the list). */
export interface RedactionRule {
  /** A short name (for documentation and tests). */
  readonly name: string;
  /** The pattern (a leading `(?i)` makes it case-insensitive). Every quantifier is bounded. */
  readonly pattern: string;
  /**
   * Literal substrings, one of which every match starts with; matched case-insensitively
   * when the pattern is. The redactor tries the rule only where a trigger occurs.
   */
  readonly triggers: readonly string[];
  /**
   * Find the triggers in any letter case although the pattern is case-sensitive (the scan
   * shares them with the case-insensitive rules' triggers, which costs less).
   */
  readonly foldTriggers?: boolean;
  /**
   * A character class (`[A-Za-z0-9_-]`): a match that ends in it continues through it, one
   * character at a time (linear, no regex stack), so a token longer than the pattern's bound
   * is replaced whole.
   */
  readonly extend?: string;
  /**
   * A character class and a bound: the match also takes up to `max` characters of the class
   * before its trigger (the pattern checks them with a lookbehind), for keys whose
   * recognizable part sits in their middle (`<32 hex>-us6`, `123456:AA...`).
   */
  readonly extendBack?: { readonly chars: string; readonly max: number };
  /**
   * A prefilter, built once per scan: false where no match that `accept` keeps can start at
   * `at` (it may say true where the pattern then fails, never false where it holds and is kept). Its state lets it answer in
   * amortized constant time while `at` grows (the text's next `@`, found once for many
   * candidates), so a rule that would look far ahead at each of many triggers does not.
   */
  readonly gate?: () => (text: string, at: number) => boolean;
  /**
   * The name of an earlier rule whose kept match at the same position always ends at least
   * where this rule's would (with its `extend`): where it is kept, this rule is not tried
   * (a later rule replaces a kept match only when it takes more of the text).
   */
  readonly coveredBy?: string;
  /**
   * The name of an earlier rule whose gate, where it says false, says so for this rule too
   * (no match of this rule starts there): this rule is not tried where that gate refused.
   */
  readonly refusedWith?: string;
  /**
   * False for a match that does not look like a secret (a path, a plain number, prose, a CSS
   * class, code): it is left alone and other rules may still match inside it. `text` and
   * `start` locate the match, for a look at what precedes it.
   */
  readonly accept?: (
    match: string,
    groups: readonly (string | undefined)[],
    text: string,
    start: number,
  ) => boolean;
}

/**
 * Where a prefixed format may start: not right after a letter (`task-list` is no `sk-` key),
 * but after anything else, a digit, `_` or `%22` included (`key_sk-...`, `0ghp_...`), and
 * right after a JSON escape (`\n`, `\t`, `\r`), so secrets inside JSON-encoded tool
 * arguments are found too.
 */
export const B = '(?:(?<![A-Za-z])|(?<=\\\\[nrt]))';

/** A prefixed format: `prefix` (a regex source) then `body` repeated `min` to 4,096 times. */
export function prefixed(
  name: string,
  triggers: readonly string[],
  prefix: string,
  body: string,
  min: number,
  extra: Partial<Pick<RedactionRule, 'accept' | 'extend'>> & { tail?: string } = {},
): RedactionRule {
  return {
    name,
    pattern: `${B}${prefix}${body}{${min},4096}${extra.tail ?? ''}`,
    triggers,
    extend: extra.extend ?? body,
    ...(extra.accept ? { accept: extra.accept } : {}),
  };
}

/**
 * The first index at or after `from` of a character that `search` (a global regex) finds, or
 * the text's length, remembered while the queries move forward: over one scan, each part of
 * the text is searched once.
 */
export function forwardFinder(search: RegExp): (text: string, from: number) => number {
  let start = -1;
  let found = -1;
  return (text, from) => {
    if (from >= start && from <= found) return found;
    search.lastIndex = from;
    const hit = search.exec(text);
    start = from;
    found = hit === null ? text.length : hit.index;
    return found;
  };
}

/**
 * {@link forwardFinder} for one character, with `indexOf` (several times faster than a
 * regex's class on a long stretch without it).
 */
export function forwardIndex(char: string): (text: string, from: number) => number {
  let start = -1;
  let found = -1;
  return (text, from) => {
    if (from >= start && from <= found) return found;
    const hit = text.indexOf(char, from);
    start = from;
    found = hit < 0 ? text.length : hit;
    return found;
  };
}

/** Most characters a URL credentials match spans after its `://`: user, `:`, password. */
const URL_CREDENTIALS_REACH = 256 + 1 + 256;

/**
 * `url-credentials` needs an `@` (or a clip's `…`, or the text's end) before the URL's first
 * blank, quote or angle bracket and within its reach: without one (`://a:` repeated), the
 * lazy password run would look 256 characters ahead at every `://`. The rules of a key in a
 * URL's user part need the `@` too.
 */
export function urlAtGate(): (text: string, at: number) => boolean {
  const nextStop = forwardFinder(/[\s"'<>]/g);
  const nextAt = forwardIndex('@');
  const nextClip = forwardIndex('…');
  return (text, at) => {
    const from = at + 3;
    const stop = nextStop(text, from);
    if (stop === text.length && stop - from <= URL_CREDENTIALS_REACH) return true;
    const end = Math.min(nextAt(text, from), nextClip(text, from));
    return end < stop && end - from <= URL_CREDENTIALS_REACH;
  };
}
