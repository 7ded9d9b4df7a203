/**
 * The default redaction rules: one regular expression per secret family, each with the
 * literal trigger substrings that every match starts with. The redactor finds all triggers
 * in one scan and tries a rule (a sticky regex) only where one of its triggers occurs, so
 * text without triggers costs one scan and no other regex work. Every pattern is prefix-anchored (a literal first, then
 * bounded or single-class runs), so no input makes it backtrack: long runs of one character
 * and 100 KB lines stay linear.
 *
 * Clipped secrets: the prefixed formats accept a shortened tail (so that prefix and tail make
 * at most 11 characters), so a key cut by a preview (`AIzaSyA-abcdefgh…`) is still caught; a PEM block
 * without its END line is redacted to the end of the text; a quoted `key = "value` without
 * its closing quote is redacted to the end of the line; URL credentials cut before the `@`
 * are redacted to the cut.
 *
 * Coverage follows the rule families of gitleaks and secretlint for the providers an agent
 * transcript meets most.
 */

/** One default rule. */
export interface RedactionRule {
  /** A short name (for documentation and tests). */
  readonly name: string;
  /** The pattern (a leading `(?i)` makes it case-insensitive). */
  readonly pattern: string;
  /**
   * Literal substrings, one of which every match starts with; matched case-insensitively
   * when the pattern is. The redactor tries the rule only where a trigger occurs.
   */
  readonly triggers: readonly string[];
}

/**
 * A word boundary that also holds right after a JSON escape (`\n`, `\t`, `\r`), so secrets
 * inside JSON-encoded tool arguments are found too.
 */
const B = '(?:\\b|(?<=\\\\[nrt]))';

/** Key names whose value is a secret, in `key = value` text. */
const SECRET_KEY_WORDS =
  'api[_-]?key|apikey|password|passwd|pwd|passphrase|secret[_-]?key|secret|token|access[_-]?key|private[_-]?key|credentials?|authorization|auth';

/**
 * The value after `key =`: escaped-JSON quoted, double or single quoted (a missing closing
 * quote runs to the end of the line: the value was clipped), or a bare word.
 */
const VALUE =
  '(?:(?:bearer|basic|token|digest)\\s+)?(?:\\\\"(?:[^"\\\\\\n]|\\\\[^"])*(?:\\\\")?|"[^"\\n]*"?|\'[^\'\\n]*\'?|\\\\?["\']?(?:[^\\s"\'\\\\,;]|\\\\(?!["\']))+)';

const PEM_HEADER = '-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY[A-Z ]{0,10}-----';
const PEM_FOOTER = '-----END[A-Z0-9 ]{0,40}PRIVATE KEY[A-Z ]{0,10}-----';

/** The default rules, in the order they run (PEM first: other rules would cut its body). */
export const DEFAULT_REDACTION_RULES: readonly RedactionRule[] = Object.freeze([
  {
    // No END line (clipped): everything after BEGIN is key material, up to the end of the text.
    name: 'pem-private-key',
    pattern: `${PEM_HEADER}[\\s\\S]*?(?:${PEM_FOOTER}|$)`,
    triggers: ['-----BEGIN'],
  },
  {
    // Group 1 is the key, group 2 the separator: both are kept, the value is replaced. The
    // value is on the key's line (`credential:\n## Next` is a heading, not a secret).
    name: 'key-value',
    pattern: `(?i)(${SECRET_KEY_WORDS})(\\\\?["']?[ \\t]*[:=](?!=)[ \\t]*)${VALUE}`,
    triggers: ['api', 'pass', 'pwd', 'secret', 'token', 'access', 'private', 'credential', 'auth'],
  },
  {
    // Tokens, not prose: an all-lower-case word after "bearer" or "basic" is left alone.
    name: 'bearer-token',
    pattern: `${B}(?:Bearer|bearer|BEARER)\\s+(?![a-z]+(?![A-Za-z0-9._~+/=-]))[A-Za-z0-9._~+/-]{8,}=*`,
    triggers: ['Bearer', 'bearer', 'BEARER'],
  },
  {
    name: 'basic-auth',
    pattern: `${B}(?:Basic|basic|BASIC)\\s+(?![a-z]+(?![A-Za-z0-9+/=]))[A-Za-z0-9+/]{8,}={0,2}`,
    triggers: ['Basic', 'basic', 'BASIC'],
  },
  {
    // Keeps `://user:` and `@`; a URL cut before its `@` (end of text or `…`) loses the rest.
    name: 'url-credentials',
    pattern: '(://[^\\s:/@"\'<>]{1,256}:)(?!\\d{1,5}(?:$|…))[^\\s/@"\'<>]{1,256}(@|(?=…)|$)',
    triggers: ['://'],
  },
  {
    name: 'openai-anthropic-key',
    pattern: `${B}sk-[A-Za-z0-9_-]{8,}`,
    triggers: ['sk-'],
  },
  {
    name: 'aws-access-key-id',
    pattern: `${B}(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA|ABIA|ACCA)[0-9A-Z]{8,16}`,
    triggers: ['AKIA', 'ASIA', 'AGPA', 'AIDA', 'AROA', 'ANPA', 'ANVA', 'AIPA', 'ABIA', 'ACCA'],
  },
  {
    name: 'github-token',
    pattern: `${B}gh[pousr]_[A-Za-z0-9]{8,}`,
    triggers: ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_'],
  },
  { name: 'github-pat', pattern: `${B}github_pat_[A-Za-z0-9_]+`, triggers: ['github_pat_'] },
  { name: 'gitlab-pat', pattern: `${B}glpat-[A-Za-z0-9_-]{6,}`, triggers: ['glpat-'] },
  { name: 'slack-token', pattern: `${B}xox[abposre]-[A-Za-z0-9-]{6,}`, triggers: ['xox'] },
  {
    name: 'slack-webhook',
    pattern: 'hooks\\.slack\\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]+',
    triggers: ['hooks.slack.com'],
  },
  { name: 'google-api-key', pattern: `${B}AIza[0-9A-Za-z_-]{8,35}`, triggers: ['AIza'] },
  { name: 'google-oauth-token', pattern: `${B}ya29\\.[0-9A-Za-z_-]{6,}`, triggers: ['ya29.'] },
  { name: 'google-client-secret', pattern: `${B}GOCSPX-[0-9A-Za-z_-]{5,}`, triggers: ['GOCSPX-'] },
  {
    name: 'stripe-key',
    pattern: `${B}(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{4,}`,
    triggers: ['sk_live_', 'sk_test_', 'rk_live_', 'rk_test_', 'pk_live_', 'pk_test_'],
  },
  { name: 'stripe-webhook-secret', pattern: `${B}whsec_[A-Za-z0-9]{6,}`, triggers: ['whsec_'] },
  { name: 'npm-token', pattern: `${B}npm_[A-Za-z0-9]{36}`, triggers: ['npm_'] },
  { name: 'huggingface-token', pattern: `${B}hf_[A-Za-z0-9]{30,}`, triggers: ['hf_'] },
  {
    name: 'sendgrid-key',
    pattern: `${B}SG\\.[A-Za-z0-9_-]{16,}(?:\\.[A-Za-z0-9_-]*)?`,
    triggers: ['SG.'],
  },
  {
    // Not after a base64 character: a JWT starts a token, never the middle of image data.
    // Header alone (a clipped token) is enough.
    name: 'jwt',
    pattern: '(?:(?<=\\\\[nrt])|(?<![A-Za-z0-9+/=_-]))eyJ[A-Za-z0-9_-]{8,}(?:\\.[A-Za-z0-9_-]*){0,2}',
    triggers: ['eyJ'],
  },
]);
