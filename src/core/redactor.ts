/**
 * Redaction: secrets are replaced before anything leaves the process (events, archives,
 * traces, reports). Redaction is copy-on-export: the caller's messages are never changed.
 */

/** Replaces secrets in a string. */
export type Redactor = (text: string) => string;

/** The replacement written in place of a secret. */
export const REDACTED = '<REDACTED>';

/**
 * Default patterns: `key = value` secrets (API keys, passwords, tokens, secrets), bearer
 * tokens, well-known key formats (OpenAI, Anthropic, AWS, GitHub, Slack, Google), JWTs and
 * PEM private keys.
 */
export const DEFAULT_REDACTION_PATTERNS: readonly string[] = [
  '(?i)(api[_-]?key|apikey|password|passwd|secret|access[_-]?token|auth[_-]?token|client[_-]?secret)(["\']?\\s*[:=]\\s*["\']?)[^\\s"\',;]+',
  '(?i)\\bbearer\\s+[a-z0-9._~+/-]{8,}=*',
  '\\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}',
  '\\b(?:AKIA|ASIA)[0-9A-Z]{16}\\b',
  '\\bgh[pousr]_[A-Za-z0-9]{30,}\\b',
  '\\bxox[abprs]-[A-Za-z0-9-]{10,}',
  '\\bAIza[0-9A-Za-z_-]{35}\\b',
  '\\beyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}',
  '-----BEGIN [A-Z ]*PRIVATE KEY-----[\\s\\S]*?-----END [A-Z ]*PRIVATE KEY-----',
];

/** Options of {@link createRedactor}. */
export interface RedactorOptions {
  /**
   * Regular expressions (strings; a leading `(?i)` makes one case-insensitive, as in the spec).
   * @default DEFAULT_REDACTION_PATTERNS
   */
  patterns?: readonly string[];
  /** Extra patterns added to the defaults. */
  extraPatterns?: readonly string[];
  /** A custom function run after the patterns. */
  custom?: Redactor;
}

/** Compiles one pattern string, honouring a leading `(?i)`. */
export function compileRedactionPattern(pattern: string): RegExp {
  if (pattern.startsWith('(?i)')) return new RegExp(pattern.slice(4), 'gi');
  return new RegExp(pattern, 'g');
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
      out = out.replace(regex, (match: string, ...groups: unknown[]) => {
        const key = groups[0];
        const separator = groups[1];
        if (typeof key === 'string' && typeof separator === 'string' && match.startsWith(key + separator)) {
          return `${key}${separator}${REDACTED}`;
        }
        return REDACTED;
      });
    }
    return custom ? custom(out) : out;
  };
}

/** Applies a redactor to every string inside a JSON-like value, returning a copy. */
export function redactDeep<T>(value: T, redact: Redactor): T {
  if (typeof value === 'string') return redact(value) as T;
  if (Array.isArray(value)) return value.map((item) => redactDeep(item, redact)) as T;
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = redactDeep(item, redact);
    return out as T;
  }
  return value;
}
