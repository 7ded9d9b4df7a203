import { CompactError } from '../errors.js';
import { onProcessCachesRelease, releaseRegExpCode } from '../process-caches.js';
import { ShardedMap } from '../sharded-map.js';
import { runSteps, runStepsYielding, type Steps } from '../time-slice.js';
import type { HiddenKeyLook } from './hidden-key-windows.js';
import { DEFAULT_REDACTION_RULES, type RedactionRule } from './redaction-rules.js';
import { releasableRedactor } from './releasable-redactor.js';
import { REDACTED, replaceMatch } from './replace-match.js';
import { rulePassSteps } from './rule-pass.js';
import { redactBlockSeams } from './split-secrets.js';

export { DEFAULT_REDACTION_RULES, type RedactionRule } from './redaction-rules.js';

/**
 * Redaction: secrets are replaced before anything leaves the process (events, archives,
 * traces, reports). Redaction is copy-on-export: the caller's messages are never changed.
 */

/** Replaces secrets in a string. */
export type Redactor = (text: string) => string;

export { REDACTED } from './replace-match.js';

/**
 * Default patterns, in the order they run: the sources of {@link DEFAULT_REDACTION_RULES}
 * (see `redaction-rules.ts` for each rule, its triggers and what it does with a clipped
 * secret). A pattern whose first two capture groups are a key and a separator (`api_key` and
 * `=`) keeps both and replaces only the value; any other pattern replaces the whole match (or,
 * for URLs, the part between its first two groups).
 *
 * Covered: `key = value` secrets (API keys, passwords, tokens, secrets, private and access
 * keys, credentials, `Authorization` headers) and keys whose name contains a secret word
 * (`SECRET_KEY_BASE=`, `OPENAI_KEY=`), bearer/basic tokens, URLs with embedded credentials or
 * a key as their user (Sentry DSN), passwords on command lines (`--password x`, `mysql -px`,
 * `curl -u user:x`), the prefixed key formats of the gitleaks/secretlint families (AI
 * providers, cloud, VCS, CI, package registries, chat, payment, databases, tools), JWTs, PEM
 * private keys and age keys, also when clipped after their recognizable prefix, and all of
 * these written with JSON unicode escapes (`\u0067hp_...`). Code that names a secret
 * (`const token = getToken()`) is left alone.
 */
export const DEFAULT_REDACTION_PATTERNS: readonly string[] = Object.freeze(
  DEFAULT_REDACTION_RULES.map((rule) => rule.pattern),
);

/** Options of {@link createRedactor}. */
export interface RedactorOptions {
  /**
   * Regular expressions (strings; a leading `(?i)` makes one case-insensitive, as in the spec).
   * @default DEFAULT_REDACTION_PATTERNS
   */
  patterns?: readonly string[];
  /**
   * Extra patterns added to the defaults (or to `patterns`).
   * @default []
   */
  extraPatterns?: readonly string[];
  /**
   * A custom function run after the patterns.
   * @default undefined
   */
  custom?: Redactor;
  /**
   * Called when a value cannot be scanned (a pattern or `custom` threw): the whole value is
   * then replaced by `<REDACTED>`, so nothing leaks and the caller goes on.
   * @default undefined
   */
  onError?: (error: unknown) => void;
}

/**
 * Wraps a redactor so that it never throws: a value it cannot scan is replaced whole by
 * `<REDACTED>` and `onError` hears why.
 */
export function guardRedactor(redact: Redactor, onError?: (error: unknown) => void): Redactor {
  return (text) => {
    try {
      return redact(text);
    } catch (error) {
      try {
        onError?.(error);
      } catch {
        // a failing listener must not make the redactor throw either
      }
      return REDACTED;
    }
  };
}

/** Compiles one pattern string, honouring a leading `(?i)`. */
export function compileRedactionPattern(pattern: string): RegExp {
  try {
    if (pattern.startsWith('(?i)')) return new RegExp(pattern.slice(4), 'gi');
    return new RegExp(pattern, 'g');
  } catch (error) {
    throw new CompactError(
      'invalid_config',
      `redaction pattern ${JSON.stringify(pattern)} is not a valid regular expression`,
      {
        cause: error,
        issues: [{ path: ['redaction', 'patterns'], message: (error as Error).message }],
      },
    );
  }
}

/**
 * Object keys whose value is a secret however it looks (`{"password": "hunter2"}` in a tool
 * call's structured input): such values are replaced whole by {@link redactDeep}. Session ids
 * (`sessionId`, `session_id`) are identifiers, not secrets, and do not match (a session
 * *token* or cookie does).
 */
export const SECRET_KEY_PATTERN =
  /^(?:[a-z0-9_.-]*?(?:api[_-]?key|apikey|password|passwd|pwd|passphrase|secret|secret[_-]?key|token|access[_-]?key|private[_-]?key|(?:encryption|signing|master|account|shared[_-]?access)[_-]?key|connection[_-]?string|credentials?|authorization|auth|cookie|jwt)|(?:[a-z0-9_.-]*[_.-])?pass)$/i;

/**
 * Builds a {@link Redactor}. `key = value` patterns keep the key and replace the value
 * (`api_key=sk-abc` becomes `api_key=<REDACTED>`); others replace the whole match.
 *
 * @example
 * ```ts
 * const redact = createRedactor({ extraPatterns: ['\\binternal-[0-9]+\\b'] });
 * redact('password: hunter2'); // 'password: <REDACTED>'
 * ```
 */
export function createRedactor(options: RedactorOptions = {}): Redactor {
  return runSteps(redactorSteps(options)());
}

/**
 * {@link createRedactor} without holding the event loop: the rules are compiled in slices of a
 * few milliseconds, a turn of the loop between them (the built-in rules take 10-30 ms of CPU
 * in one piece in a fresh process). The redactor it resolves with gives the same output as
 * {@link createRedactor}'s; an invalid pattern rejects with the same `invalid_config` error.
 *
 * @example
 * ```ts
 * const redact = await createRedactorAsync({ extraPatterns: ['\\binternal-[0-9]+\\b'] });
 * redact('password: hunter2'); // 'password: <REDACTED>'
 * ```
 */
export async function createRedactorAsync(options: RedactorOptions = {}): Promise<Redactor> {
  return runStepsYielding(redactorSteps(options)());
}

/**
 * {@link createRedactor} in two halves: the patterns that are no built-in rule are checked at
 * once (a bad one throws its typed error here), and the steps returned compile every rule, a
 * step after each few (the built-in rules take 10-30 ms of CPU in one piece).
 */
export function redactorSteps(options: RedactorOptions = {}): () => Steps<Redactor> {
  const sources = [...(options.patterns ?? DEFAULT_REDACTION_PATTERNS), ...(options.extraPatterns ?? [])];
  const pem: RedactionRule[] = [];
  const scanned: RedactionRule[] = [];
  const others: string[] = [];
  for (const source of sources) {
    const rule = DEFAULT_RULE_BY_PATTERN.get(source);
    // PEM blocks go first, on their own: other rules would cut their body into pieces.
    if (rule?.name === 'pem-private-key') pem.push(rule);
    else if (rule) scanned.push(rule);
    else others.push(source);
  }
  for (const source of others) compileRedactionPattern(source);
  const { custom, onError } = options;
  return function* () {
    const passes: Redactor[] = [];
    // The hidden-key hits of a text, looked for once for all the passes.
    const look: HiddenKeyLook = { text: undefined, hits: [] };
    for (const rule of pem) passes.push(yield* rulePassSteps([rule], look));
    if (scanned.length > 0) passes.push(yield* rulePassSteps(scanned, look));
    for (const source of others) passes.push(fullPass(source, []));
    return guardRedactor((text: string) => {
      let out = text;
      try {
        for (const pass of passes) out = pass(out);
      } finally {
        // No text is held past its redaction.
        look.text = undefined;
        look.hits = [];
      }
      return custom ? custom(out) : out;
    }, onError);
  };
}

const DEFAULT_RULE_BY_PATTERN = new Map(DEFAULT_REDACTION_RULES.map((rule) => [rule.pattern, rule]));

/** One global replace over the text (skipped when none of `triggers` occurs, if any are given). */
function fullPass(source: string, triggers: readonly string[]): Redactor {
  const regex = compileRedactionPattern(source);
  return (text) => {
    if (triggers.length > 0 && !triggers.some((trigger) => text.includes(trigger))) return text;
    regex.lastIndex = 0;
    return text.replace(regex, (match: string, ...rest: unknown[]) => {
      // `rest` ends with offset, whole string (and named groups when any): keep the groups only.
      const groups = rest.slice(0, typeof rest.at(-1) === 'object' ? -3 : -2);
      return replaceMatch(match, groups);
    });
  };
}

/**
 * The default rules, compiled by steps once per process: {@link warmDefaultRedactor} runs the
 * steps in slices, and a redaction before it is done finishes them at once (nothing goes out
 * unredacted). Released with the process's caches, built again on the next use.
 */
const defaultRules = releasableRedactor(() => redactorSteps()());
onProcessCachesRelease(() => defaultRules.release());

/**
 * The redactor with the default rules. Its rules are compiled on its first redaction, in one
 * piece (23-31 ms of CPU in a fresh process) unless {@link warmDefaultRedactor} compiled them
 * ahead, a few milliseconds between two turns of the loop: an async caller awaits that first.
 */
export function getDefaultRedactor(): Redactor {
  return defaultRules.redact;
}

/** Compiles the default rules in slices of a few milliseconds (at once resolved when they are). */
export function warmDefaultRedactor(): Promise<void> {
  return defaultRules.warm();
}

/**
 * Redacts, then shortens to at most `max` characters (the last one an ellipsis `…`). Every
 * place that previews or clips text (summaries, tool-fact lines, event previews, report
 * excerpts) should use it: a secret cut first no longer matches the pattern of its full
 * shape, so redaction must come before the cut. The cut never splits a surrogate pair or a
 * `<REDACTED>` marker.
 *
 * @example
 * ```ts
 * redactThenClip(`curl -H "x-api-key: ${key}" https://api.example.com/v1/items`, 40);
 * // 'curl -H "x-api-key: <REDACTED>" https://…'
 * ```
 */
export function redactThenClip(text: string, max: number, redact: Redactor = getDefaultRedactor()): string {
  const clean = redact(text);
  if (clean.length <= max) return clean;
  if (max <= 0) return '';
  let end = max - 1;
  const code = clean.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  const marker = clean.lastIndexOf('<', end);
  if (marker >= 0 && end - marker < REDACTED.length && clean.startsWith(REDACTED, marker)) end = marker;
  return `${clean.slice(0, end)}…`;
}

/**
 * Applies a redactor to every string inside a JSON-like value, object keys included, returning
 * a copy; a scalar under a secret-named key ({@link SECRET_KEY_PATTERN}) is replaced whole.
 */
export function redactDeep<T>(value: T, redact: Redactor): T {
  return redactValue(value, redact, new WeakMap()) as T;
}

function redactValue(value: unknown, redact: Redactor, seen: WeakMap<object, unknown>): unknown {
  if (typeof value === 'string') return redact(value);
  if (value === null || typeof value !== 'object') return value;
  const known = seen.get(value);
  if (known !== undefined) return known;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    seen.set(value, out);
    for (const item of value) out.push(redactValue(item, redact, seen));
    redactBlockSeams(value, out, redact);
    return out;
  }
  if (value instanceof Date) return new Date(value.getTime());
  const out: Record<string, unknown> = {};
  seen.set(value, out);
  let alike: Map<string, number> | undefined;
  for (const [key, item] of Object.entries(value)) {
    const secret = SECRET_KEY_PATTERN.test(key) && item !== null && typeof item !== 'object' && item !== '';
    // A key is text too (`{"ghp_...": 1}`, a URL with a password as a key); keys redacted alike
    // keep their values apart (`<REDACTED>`, `<REDACTED>#2`).
    let name = redactKey(key, redact);
    if (Object.hasOwn(out, name)) {
      alike ??= new Map();
      const count = (alike.get(name) ?? 1) + 1;
      alike.set(name, count);
      name = `${name}#${count}`;
    }
    out[name] = secret ? REDACTED : redactUnderKey(key, item, redact, seen);
  }
  return out;
}

/**
 * Keys each redactor gave back unchanged (`role`, `tokensBefore`: nearly every key), not scanned
 * again. Only clean keys are kept, so no secret stays here.
 */
let cleanKeys = new WeakMap<Redactor, Set<string>>();
onProcessCachesRelease(() => {
  cleanKeys = new WeakMap();
});

function redactKey(key: string, redact: Redactor): string {
  let clean = cleanKeys.get(redact);
  if (clean?.has(key)) return key;
  const out = redact(key);
  if (out === key && key.length <= 64) {
    if (!clean) {
      clean = new Set();
      cleanKeys.set(redact, clean);
    } else if (clean.size >= 4096) clean.clear();
    clean.add(key);
  }
  return out;
}

/** A key whose name holds a secret word without ending in one (`SECRET_KEY_BASE`, `OPENAI_KEY`). */
const NAMED_KEY = /^[A-Za-z0-9_.-]{1,64}$/;
const SECRET_WORD = /secret|token|passw|key|cred/i;

/**
 * A string under such a key is redacted as `key=value` text, so the rules that need the key
 * (`SECRET_KEY_BASE=<hex>`) see it; the key's own text is dropped again.
 */
function redactUnderKey(
  key: string,
  item: unknown,
  redact: Redactor,
  seen: WeakMap<object, unknown>,
): unknown {
  if (typeof item !== 'string' || !SECRET_WORD.test(key) || !NAMED_KEY.test(key)) {
    return redactValue(item, redact, seen);
  }
  const assigned = redact(`${key}=${item}`);
  return assigned.startsWith(`${key}=`) ? assigned.slice(key.length + 1) : redact(item);
}

/**
 * Redacts an archived text that may be JSON (an artifact of summarized messages): when it
 * parses, the structured-key pass of {@link redactDeep} runs too (a `{"Cookie": ...}` tool input
 * is replaced whole, as in the transcript file), then it is written back as JSON; other text is
 * redacted as text.
 */
export function redactArchivedText(text: string, redact: Redactor): string {
  const start = text.trimStart()[0];
  if (start === '{' || start === '[') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return redact(text);
    }
    const pretty = /^[[{]\r?\n/.test(text.trimStart());
    return JSON.stringify(redactDeep(parsed, redact), null, pretty ? 2 : undefined);
  }
  return redact(text);
}

/**
 * A redactor that remembers its answers for one job (a summarizer request scans the same
 * text in the message's wire form and in its parsed fields): each distinct text is scanned once.
 * Sharded: a summary of 300k tiny messages remembers a join per seam, and one `Map` of them
 * grew in a single `set` that held the loop 30-74 ms (issue 47).
 */
export function memoizeRedactor(redact: Redactor): Redactor {
  const seen = new ShardedMap<string>();
  return (text) => {
    if (text.length < 16) return redact(text);
    let redacted = seen.get(text);
    if (redacted === undefined) {
      redacted = redact(text);
      seen.set(text, redacted);
    }
    return redacted;
  };
}

// Their machine code is dropped when the last manager shuts down (process-caches.ts).
releaseRegExpCode(SECRET_KEY_PATTERN, NAMED_KEY, SECRET_WORD);
