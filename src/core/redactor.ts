import { CompactError } from './errors.js';

/**
 * Redaction: secrets are replaced before anything leaves the process (events, archives,
 * traces, reports). Redaction is copy-on-export: the caller's messages are never changed.
 */

/** Replaces secrets in a string. */
export type Redactor = (text: string) => string;

/** The replacement written in place of a secret. */
export const REDACTED = '<REDACTED>';

/**
 * A word boundary that also holds right after a JSON escape (`\n`, `\t`, `\r`), so secrets
 * inside JSON-encoded tool arguments are found too.
 */
const B = '(?:\\b|(?<=\\\\[nrt]))';

/**
 * Default patterns. A pattern whose first two capture groups are a key and a separator
 * (`api_key` and `=`) keeps both and replaces only the value; any other pattern replaces the
 * whole match (or, for URLs, the part between its first two groups).
 *
 * Covered: `key = value` secrets (API keys, passwords, tokens, secrets, private and access
 * keys, credentials, `Authorization` headers), bearer/basic tokens, URLs with embedded
 * credentials, and the well-known key formats of OpenAI, Anthropic, AWS (access key ids and
 * secret keys), GitHub, Slack, Google, Stripe, plus JWTs and PEM private keys.
 */
export const DEFAULT_REDACTION_PATTERNS: readonly string[] = [
  // PEM private keys first: their body would otherwise be cut into pieces by other patterns.
  '-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\\s\\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----',
  // key = value (quoted or not), JSON `"key": "value"` and escaped JSON `\"key\":\"value\"`.
  '(?i)([a-z0-9_.-]*(?:api[_-]?key|apikey|password|passwd|pwd|passphrase|secret|secret[_-]?key|token|access[_-]?key|private[_-]?key|credentials?|authorization|auth))(\\\\?["\']?\\s*[:=]\\s*)(?:(?:bearer|basic|token|digest)\\s+)?(?:\\\\"(?:[^"\\\\\\n]|\\\\[^"])*\\\\"|"[^"\\n]*"|\'[^\'\\n]*\'|\\\\?["\']?(?:[^\\s"\'\\\\,;]|\\\\(?!["\']))+)',
  '(?i)' + B + '(?:bearer|basic)\\s+[a-z0-9._~+/-]{8,}=*',
  // URLs with credentials: keep scheme and user, replace the password.
  '(?i)' + B + '([a-z][a-z0-9+.-]*://[^\\s:/@]+:)[^\\s/@]+(@)',
  B + 'sk-(?:ant-(?:api\\d{2}-)?|proj-|svcacct-|admin-)?[A-Za-z0-9_-]{16,}',
  B + '(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\\b',
  B + 'gh[pousr]_[A-Za-z0-9]{30,}\\b',
  B + 'github_pat_[A-Za-z0-9_]{40,}\\b',
  B + 'xox[abposr]-[A-Za-z0-9-]{10,}',
  B + 'https://hooks\\.slack\\.com/services/[A-Za-z0-9/_-]+',
  B + 'AIza[0-9A-Za-z_-]{35}',
  B + '(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}',
  B + 'whsec_[A-Za-z0-9]{24,}',
  B + 'eyJ[A-Za-z0-9_-]{8,}\\.eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}',
];

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
 * call's structured input): such values are replaced whole by {@link redactDeep}.
 */
export const SECRET_KEY_PATTERN =
  /^[a-z0-9_.-]*?(?:api[_-]?key|apikey|password|passwd|pwd|passphrase|secret|secret[_-]?key|token|access[_-]?key|private[_-]?key|credentials?|authorization|auth|cookie|session[_-]?id)$/i;

function replaceMatch(match: string, groups: unknown[]): string {
  const key = groups[0];
  const separator = groups[1];
  if (typeof key === 'string' && typeof separator === 'string') {
    if (match.startsWith(key + separator)) {
      const value = match.slice(key.length + separator.length);
      // Keep the quotes around a quoted value so JSON text stays JSON.
      if (value.startsWith('\\"')) return `${key}${separator}\\"${REDACTED}\\"`;
      const quote = value[0];
      if (quote === '"' || quote === "'") {
        const closed = value.length > 1 && value.endsWith(quote);
        return `${key}${separator}${quote}${REDACTED}${closed ? quote : ''}`;
      }
      return `${key}${separator}${REDACTED}`;
    }
    // Two groups around the secret (a URL's `scheme://user:` and `@`).
    if (match.startsWith(key) && match.endsWith(separator)) return `${key}${REDACTED}${separator}`;
  }
  return REDACTED;
}

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
  const sources = [...(options.patterns ?? DEFAULT_REDACTION_PATTERNS), ...(options.extraPatterns ?? [])];
  const regexes = sources.map(compileRedactionPattern);
  const custom = options.custom;
  return (text: string) => {
    let out = text;
    for (const regex of regexes) {
      regex.lastIndex = 0;
      out = out.replace(regex, (match: string, ...rest: unknown[]) => {
        // `rest` ends with offset, whole string (and named groups when any): keep the groups only.
        const groups = rest.slice(0, typeof rest.at(-1) === 'object' ? -3 : -2);
        return replaceMatch(match, groups);
      });
    }
    return custom ? custom(out) : out;
  };
}

/**
 * Applies a redactor to every string inside a JSON-like value, returning a copy; a scalar
 * under a secret-named key ({@link SECRET_KEY_PATTERN}) is replaced whole.
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
    return out;
  }
  if (value instanceof Date) return new Date(value.getTime());
  const out: Record<string, unknown> = {};
  seen.set(value, out);
  for (const [key, item] of Object.entries(value)) {
    const secret = SECRET_KEY_PATTERN.test(key) && item !== null && typeof item !== 'object' && item !== '';
    out[key] = secret ? REDACTED : redactValue(item, redact, seen);
  }
  return out;
}
