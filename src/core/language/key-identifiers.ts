/**
 * Key identifiers: the ids an agent needs to go on acting after compaction. Ids passed to
 * state-changing calls first, then ids the user named, then ids the assistant named, then ids
 * tool results revealed (not from listings), capped
 * at a share of the budget. The scan is one pass over whitespace-separated tokens.
 */

import { ChunkedList } from '../chunked-list.js';
import { releaseRegExpCode } from '../process-caches.js';
import { ShardedMap } from '../sharded-map.js';
import { runSteps, type Steps } from '../time-slice.js';

/** What kind of identifier a token is. */
export type IdentifierKind = 'uuid' | 'url' | 'path' | 'file' | 'ticket' | 'code' | 'name';

/** Longest token considered an identifier. */
const MAX_ID_CHARS = 80;
/** Longest URL considered. */
const MAX_URL_CHARS = 300;
const BACKTICKED = /`([A-Za-z_][\w.]{2,60})`/g;
const FILE_NAME =
  /^[\w-][\w.-]*\.(?:ts|tsx|js|jsx|mjs|cjs|py|md|rst|json|ya?ml|go|rs|java|kt|rb|php|cs|cpp|c|h|sql|sh|toml|txt|css|html|ini|cfg|lock|pl|cgi|csv|xml|log)$/;
const ERROR_NAME = /^[A-Z]\w*(?:Error|Exception)$/;
const MEMBER = /^[A-Z]\w*\.[a-z_]\w*$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TICKET = /^[A-Z][A-Z0-9]{1,9}-\d+$/;
const CODE = /^#?[A-Za-z0-9][\w-]*$/;
const PATH_CHARS = /^[\w.@~+/-]+(?::\d+)?$/;

/**
 * Random key material (a PEM body line, a pasted API key): a run of 16 or more characters,
 * between `/ + - _ . =`, that mixes upper case, lower case and digits. Never an id worth
 * keeping, and a secret the redactor could not recognize once cut from its context.
 */
export function isKeyMaterial(token: string): boolean {
  if (token.length < 16) return false;
  for (const segment of token.split(/[/+\-_.=]/)) {
    if (segment.length >= 16 && /[A-Z]/.test(segment) && /[a-z]/.test(segment) && /\d/.test(segment))
      return true;
  }
  return false;
}

/** Classifies one token (already stripped of trailing punctuation), or undefined for ordinary words. */
export function identifierKind(token: string): IdentifierKind | undefined {
  if (isKeyMaterial(token) && !token.startsWith('http')) return undefined;
  if (token.startsWith('http://') || token.startsWith('https://'))
    return token.length > 10 && token.length <= MAX_URL_CHARS ? 'url' : undefined;
  if (token.length < 4 || token.length > MAX_ID_CHARS) return undefined;
  if (token.includes('?') || token.includes('=') || token.includes('&') || token.includes('%'))
    return undefined;
  if (UUID.test(token)) return 'uuid';
  if (TICKET.test(token)) return 'ticket';
  const slash = token.indexOf('/');
  if (slash >= 0) {
    // Paths and branches: word characters, dots and dashes between slashes, maybe `:line`.
    if (!PATH_CHARS.test(token)) return undefined;
    // `/title` (a closing tag) is no path: one segment needs an extension.
    if (slash === 0 && token.indexOf('/', 1) < 0 && !token.includes('.')) return undefined;
    if (token.includes('//') || token.length < 5) return undefined;
    // A path or a branch: a/b with a letter on both sides of some slash.
    return /[A-Za-z]/.test(token.slice(0, slash)) || token.startsWith('/') || token.startsWith('.')
      ? 'path'
      : undefined;
  }
  if (FILE_NAME.test(token)) return 'file';
  if (ERROR_NAME.test(token) || MEMBER.test(token)) return 'name';
  if (!CODE.test(token)) return undefined;
  const digits = countDigits(token);
  if (digits === 0) {
    // CONSTANT_NAMES and snake_case_ids with no digit are names, not ids, unless quoted as such.
    return undefined;
  }
  const letters = token.length - digits - countOf(token, '-_#');
  // Pure numbers: long ones only (order numbers), never dates or amounts.
  if (letters === 0) return digits >= 6 && !token.includes('-') ? 'code' : undefined;
  // Short things like p99, 4xx, v2, 10ms are not ids.
  if (token.length < 5 && !token.startsWith('#')) return undefined;
  if (/^\d+(?:ms|s|kb|mb|gb|px|am|pm|st|nd|rd|th|k|m|x|h|d)$/i.test(token)) return undefined;
  return 'code';
}

function countDigits(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) n++;
  }
  return n;
}

function countOf(text: string, chars: string): number {
  let n = 0;
  for (const c of text) if (chars.includes(c)) n++;
  return n;
}

/** An identifier found in text. */
export interface FoundIdentifier {
  text: string;
  kind: IdentifierKind;
}

/** Char codes of a token (`[\w#@./:~+%?=&-]`): a token is a maximal run of them. */
const TOKEN_CHAR = new Uint8Array(128);
for (const c of 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_#@./:~+%?=&-')
  TOKEN_CHAR[c.charCodeAt(0)] = 1;
/** Punctuation stripped from both ends of a token (a leading `../` stays). */
const TRAILING = new Set(['.', ':', '-', '+', '~'].map((c) => c.charCodeAt(0)));

const isTokenChar = (code: number) => code < 128 && TOKEN_CHAR[code] === 1;
const isLower = (code: number) => code >= 97 && code <= 122;
const isLetter = (code: number) => isLower(code) || (code >= 65 && code <= 90);

/**
 * The distinct identifiers of `text`, in order of first appearance, at most `limit`. Tokens are
 * found by a scan of char codes, not `matchAll`: a match array and a string per word of every
 * tool output was most of what clearing old results allocated on a cold call (issue 47 point
 * 2: 430 of 1,430 MB at 16k messages); a token is sliced only when it may be an identifier.
 */
export function findIdentifiers(text: string, limit = Number.POSITIVE_INFINITY): FoundIdentifier[] {
  const found: Found = { seen: new Set(), out: [], limit };
  return scanTokens(text, found, 0, text.length) < 0 ? found.out : withBackticked(text, found);
}

/** Characters scanned between two steps of {@link findIdentifiersSteps}. */
const STEP_CHARS = 16_384;

/**
 * {@link findIdentifiers} as steps, one every {@link STEP_CHARS} characters (the placeholder of
 * a cleared output of megabytes reads its first 200k: ~18 ms in one piece, issue 47). A step
 * ends after the token it is in, so the tokens and the result are {@link findIdentifiers}'s.
 */
export function* findIdentifiersSteps(
  text: string,
  limit = Number.POSITIVE_INFINITY,
): Steps<FoundIdentifier[]> {
  const found: Found = { seen: new Set(), out: [], limit };
  for (let from = 0; from < text.length; ) {
    from = scanTokens(text, found, from, Math.min(text.length, from + STEP_CHARS));
    if (from < 0) return found.out;
    yield;
  }
  return withBackticked(text, found);
}

/** The identifiers found so far. */
interface Found {
  readonly seen: Set<string>;
  readonly out: FoundIdentifier[];
  readonly limit: number;
}

/**
 * Scans the tokens that start in `text[from, until)` (the last may run past `until`) into
 * `found`: the position after them, or -1 once `found` holds its limit.
 */
function scanTokens(text: string, found: Found, from: number, until: number): number {
  const { seen, out, limit } = found;
  const length = text.length;
  while (from < until) {
    if (!isTokenChar(text.charCodeAt(from))) {
      from++;
      continue;
    }
    let to = from + 1;
    while (to < length && isTokenChar(text.charCodeAt(to))) to++;
    const token = tokenAt(text, from, to);
    from = to;
    if (token === undefined) continue;
    const kind = identifierKind(token);
    if (!kind || seen.has(token)) continue;
    seen.add(token);
    out.push({ text: token, kind });
    if (out.length >= limit) return -1;
  }
  return from;
}

/** `found` with the backticked names of `text` it lacks (up to its limit). */
function withBackticked(text: string, { seen, out, limit }: Found): FoundIdentifier[] {
  for (const match of text.matchAll(BACKTICKED)) {
    const token = match[1]!;
    if (seen.has(token) || !/[._]|[a-z][A-Z]/.test(token)) continue;
    seen.add(token);
    out.push({ text: token, kind: 'name' });
    if (out.length >= limit) break;
  }
  return out;
}

/**
 * The token `text[from, to)` stripped of its punctuation (see {@link TRAILING}), or
 * `undefined` when {@link identifierKind} cannot take it: too long, under 4 characters, or a
 * word of letters starting lower case (no uuid, ticket, path, file, name or code is one).
 */
function tokenAt(text: string, from: number, to: number): string | undefined {
  if (to - from > MAX_URL_CHARS + 4) return undefined;
  let end = to;
  while (end > from && TRAILING.has(text.charCodeAt(end - 1))) end--;
  let start = from;
  if (!text.startsWith('../', from)) while (start < end && TRAILING.has(text.charCodeAt(start))) start++;
  if (end - start < 4) return undefined;
  if (isLower(text.charCodeAt(start))) {
    let k = start + 1;
    while (k < end && isLetter(text.charCodeAt(k))) k++;
    if (k === end) return undefined;
  }
  return text.slice(start, end);
}

/**
 * Where an id was named: its rank in the key identifiers line. An id the previous summary
 * carries ranks as `summary` whatever its first origin: what a version kept, the next keeps
 * before ids the assistant has only just named.
 */
export type IdentifierOrigin = 'action' | 'user' | 'assistant' | 'summary' | 'result';
const ORIGIN_RANK: Record<IdentifierOrigin, number> = {
  action: 0,
  user: 1,
  summary: 2,
  assistant: 3,
  result: 4,
};

/** Collects ids with the best place they were named, keeping first-seen order within a rank. */
export class IdentifierLedger {
  // Sharded, with the order of first naming in a chunked list: one `Map` of 300k ids ("hi 1" to
  // "hi 300000") grew in a single `set` that held the loop 20-40 ms (issue 47).
  readonly #ids = new ShardedMap<{ rank: number }>();
  readonly #order = new ChunkedList<string>();

  /** Records an id named at `origin`. */
  add(id: string, origin: IdentifierOrigin): void {
    const rank = ORIGIN_RANK[origin];
    const known = this.#ids.get(id);
    if (!known) {
      this.#ids.set(id, { rank });
      this.#order.push(id);
    } else if (rank < known.rank) known.rank = rank;
  }

  /** Records every identifier found in `text`. */
  addText(text: string, origin: IdentifierOrigin): void {
    for (const found of findIdentifiers(text)) this.add(found.text, origin);
  }

  /** Ids by rank (actions, then user, earlier summary, assistant, tool results), most recently named first within a rank. */
  ranked(): string[] {
    return runSteps(this.rankedSteps());
  }

  /**
   * {@link ranked} as {@link Steps}, linear: the map holds the ids in their order of first
   * naming, so each rank's ids are read in that order and reversed (a sort of 200k ids, "hi 1"
   * to "hi 200000", held the loop 15 ms). A step every {@link IDS_PER_STEP} ids.
   */
  *rankedSteps(): Steps<string[]> {
    const byRank = Object.values(ORIGIN_RANK).map(() => new ChunkedList<string>());
    let read = 0;
    for (const id of this.#order) {
      byRank[this.#ids.get(id)!.rank]!.push(id);
      if (++read % IDS_PER_STEP === 0) yield;
    }
    const out = new ChunkedList<string>();
    for (const ids of byRank) {
      for (let i = ids.length - 1; i >= 0; i--) {
        out.push(ids.at(i)!);
        if (i % IDS_PER_STEP === 0) yield;
      }
    }
    yield;
    return out.toArray();
  }
}

/** Ids read between two steps of {@link IdentifierLedger.rankedSteps}. */
const IDS_PER_STEP = 4096;

/**
 * Picks the ids for the key identifiers section: in rank order, skipping those `covered`
 * says are already in the summary, while their cost (`countTokens(id) + 2` each: a bullet and
 * a line break) stays within `budget` tokens.
 */
export function pickKeyIdentifiers(
  ranked: readonly string[],
  budget: number,
  countTokens: (text: string) => number,
  covered: (id: string) => boolean = () => false,
): string[] {
  return runSteps(pickKeyIdentifierSteps(ranked, budget, countTokens, covered));
}

/** {@link pickKeyIdentifiers} as {@link Steps}: a pause every few ids (each is counted, and looked for in the summary). */
export function* pickKeyIdentifierSteps(
  ranked: readonly string[],
  budget: number,
  countTokens: (text: string) => number,
  covered: (id: string) => boolean = () => false,
): Steps<string[]> {
  const out: string[] = [];
  let used = 0;
  let work = 0;
  for (const id of ranked) {
    if (++work % 16 === 0) yield;
    if (covered(id)) continue;
    const cost = countTokens(id) + 2;
    if (used + cost > budget) continue;
    used += cost;
    out.push(id);
  }
  return out;
}

// Their machine code is dropped when the last manager shuts down (process-caches.ts).
releaseRegExpCode(BACKTICKED, FILE_NAME, ERROR_NAME, MEMBER, UUID, TICKET, CODE, PATH_CHARS);
