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
  /** The pattern (a leading `(?i)` makes it case-insensitive). Every quantifier is bounded. */
  readonly pattern: string;
  /**
   * Literal substrings, one of which every match starts with; matched case-insensitively
   * when the pattern is. The redactor tries the rule only where a trigger occurs.
   */
  readonly triggers: readonly string[];
  /**
   * A character class (`[A-Za-z0-9_-]`): a match that ends in it continues through it, one
   * character at a time (linear, no regex stack), so a token longer than the pattern's bound
   * is replaced whole.
   */
  readonly extend?: string;
  /**
   * False for a match that does not look like a secret (a path, a plain number, prose, a CSS
   * class): it is left alone and other rules may still match inside it.
   */
  readonly accept?: (match: string, groups: readonly (string | undefined)[]) => boolean;
}

/**
 * Where a prefixed format may start: not right after a letter (`task-list` is no `sk-` key),
 * but after anything else, a digit, `_` or `%22` included (`key_sk-...`, `0ghp_...`), and
 * right after a JSON escape (`\n`, `\t`, `\r`), so secrets inside JSON-encoded tool
 * arguments are found too.
 */
const B = '(?:(?<![A-Za-z])|(?<=\\\\[nrt]))';

/** Key names whose value is a secret, in `key = value` text. */
const SECRET_KEY_WORDS = [
  'api[_-]?key',
  'apikey',
  'password',
  'passwd',
  'passphrase',
  '(?<![a-z])pass',
  'pwd',
  'secret[_-]?key',
  'secret',
  'token',
  'access[_-]?key',
  'private[_-]?key',
  '(?:encryption|signing|master|account)[_-]?key',
  'shared[_-]?access[_-]?(?:key|signature)',
  'connection[_-]?string',
  'credentials?',
  'authorization',
  'auth',
  'jwt',
].join('|');

/**
 * The separator: `=`, `:`, `:=` or `=>`, after the key's closing quote (escaped once or
 * twice in JSON inside JSON). `==` is a comparison, not an assignment.
 */
const SEPARATOR = '\\\\{0,7}["\']?[ \\t]{0,16}(?::=|=>|:|=(?!=))[ \\t]{0,16}';

/**
 * Where a bare value ends before the line does: another assignment (`a=1 token=abc b=2`,
 * `pass=x; user=bob`), so the rest of a log line is not taken for the secret.
 */
const NEXT_ASSIGNMENT = '[ \\t,;&]{1,4}[A-Za-z_][\\w.-]{0,63}[ \\t]{0,4}(?::=|=>|=(?!=)|:[ \\t])';

/**
 * The value after `key =`: escaped-JSON quoted (any depth), double or single quoted (a missing
 * closing quote runs to the end of the line: the value was clipped), or bare, stopping at a
 * quote, a JSON escape or the end of the line (`password = correct horse battery`) and, unless
 * `toLineEnd` (a `Cookie:` header's `a=1; b=2` is all secret), before another assignment.
 */
function valuePattern(toLineEnd: boolean): string {
  const stop = toLineEnd ? '' : `(?!${NEXT_ASSIGNMENT})`;
  return [
    '(?:(?:bearer|basic|token|digest)[ \\t]{1,16})?',
    '(?:\\\\{1,7}"(?:[^"\\\\\\r\\n]|\\\\{1,7}[^"\\\\\\r\\n]){0,4096}(?:\\\\{1,7}")?',
    '|"[^"\\r\\n]{0,4096}"?',
    "|'[^'\\r\\n]{0,4096}'?",
    `|(?:[^\\s"'\\\\]|\\\\(?![nrtu"'\\\\]))(?:${stop}[^\\r\\n"\\\\]|\\\\(?![nrtu"'\\\\])){0,4096})`,
  ].join('');
}

const PEM_HEADER = '-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY[A-Z ]{0,10}-----';
const PEM_FOOTER = '-----END[A-Z0-9 ]{0,40}PRIVATE KEY[A-Z ]{0,10}-----';
/** A line break, raw or JSON-escaped. */
const PEM_BREAK = '(?:\\r?\\n|\\\\r\\\\n|\\\\n)';
/**
 * A PEM body without its END line: whole base64 lines (a line of prose after a clipped key,
 * `next line`, is no key material; a line at the 4,096 bound goes on through the rule's
 * `extend`) and the optional header fields, nothing else.
 */
const PEM_LINE = `(?:[A-Za-z0-9+/=]{4096}|[A-Za-z0-9+/=]{1,4095}(?![A-Za-z0-9+/=])(?=[ \\t]{0,8}(?:${PEM_BREAK}|$|…|["'\\\\])))`;
const PEM_BODY = `(?:(?:[ \\t]{0,8}${PEM_BREAK}){1,2}(?:${PEM_LINE}|(?:Proc-Type|DEK-Info|Comment):[^\\r\\n\\\\]{0,256})){0,8192}`;

/** Words that start prose or a placeholder, not a secret (`password: is required`). */
const NOT_A_VALUE =
  /^(?:is|are|was|were|be|the|a|an|and|or|not|no|none|null|nil|true|false|yes|undefined|required|optional|set|unset|empty|see|use|it|this|that|must|should|will|can|to|of|in|for|with|from|by|on|if|when|your|my|our)$/i;

/** A mix of upper case, lower case and digits over 16 characters: key material, not a file name. */
const KEY_MATERIAL = (segment: string) =>
  segment.length >= 16 && /[A-Z]/.test(segment) && /[a-z]/.test(segment) && /[0-9]/.test(segment);

/** `/srv/app`, `~/x`, `./a/b`, `src/auth/x`: a path, not a secret (base64 key material is not). */
export function looksLikePath(word: string): boolean {
  if (!word.includes('/') || word.length > 1024) return false;
  if (!/^(?:~|\.{1,2})?\/?[A-Za-z0-9_.@~-]+(?:\/[A-Za-z0-9_.@~-]*)*$/.test(word)) return false;
  const segments = word.split('/');
  if (segments.some(KEY_MATERIAL)) return false;
  // One segment of 8 or more characters without a dot that is not a lower-case word
  // (`/AAAA...` of a 40-character AWS secret, whole or cut) is no path; `/workspace` is.
  const named = segments.filter(Boolean);
  const only = named.length === 1 ? named[0]! : '';
  if (only.length >= 8 && !only.includes('.') && !/^[a-z_-]+$/.test(only)) return false;
  return /^[~./]/.test(word) || !/[A-Z]/.test(word);
}

/** The value of a `key = value` match without its quotes and scheme word. */
function bareValue(match: string, groups: readonly (string | undefined)[]): string {
  const value = match.slice((groups[0]?.length ?? 0) + (groups[1]?.length ?? 0));
  return value.replace(/^(?:(?:bearer|basic|token|digest)[ \t]+)?\\*["']?/i, '').replace(/\\*["']?\s*$/, '');
}

/** `token: 128000`, `pwd: /path`, `auth: src/auth/x`, `password: is required` are left alone. */
function acceptKeyValue(match: string, groups: readonly (string | undefined)[]): boolean {
  const value = bareValue(match, groups);
  const first = value.split(/[\s,;]/, 1)[0] ?? '';
  if (first === '' || NOT_A_VALUE.test(first) || first.startsWith('<REDACTED>')) return false;
  // A path is a value only for the keys that name one as often as a secret (`pwd`, `auth`):
  // after `aws_secret_access_key=` a slash-separated value is key material (`/AAAA/AAAA...`).
  if (/^(?:pwd|auth)$/i.test(groups[0] ?? '') && looksLikePath(first)) return false;
  // Plain numbers are counts and limits (`token: 128000`), except for passwords and PINs.
  if (/^\d+(?:\.\d+)?$/.test(first) && !/pass|pwd|secret|pin/i.test(groups[0] ?? '')) return false;
  return true;
}

/** `sk-spinner-bounce` (a CSS class) is no key: lower-case words only, no digit, no key family. */
function acceptOpenAiKey(match: string): boolean {
  const body = match.slice(3);
  if (!/^[a-z]{1,14}(?:-[a-z]{1,14}){1,8}$/.test(body)) return true;
  return /^(?:proj|ant|svcacct|admin|None)-/.test(body);
}

/** The default rules, in the order they run (PEM first: other rules would cut its body). */
export const DEFAULT_REDACTION_RULES: readonly RedactionRule[] = Object.freeze([
  {
    // No END line (clipped): the base64 lines after BEGIN are key material, up to the first
    // line that is not base64 (prose after a clipped key stays).
    name: 'pem-private-key',
    pattern: `${PEM_HEADER}(?:[\\s\\S]{0,65536}?${PEM_FOOTER}|${PEM_BODY})`,
    triggers: ['-----BEGIN'],
    extend: '[A-Za-z0-9+/=]',
  },
  {
    // Group 1 is the key, group 2 the separator: both are kept, the value is replaced. The
    // value is on the key's line (`credential:\n## Next` is a heading, not a secret).
    name: 'key-value',
    pattern: `(?i)(${SECRET_KEY_WORDS})(${SEPARATOR})${valuePattern(false)}`,
    triggers: [
      'api',
      'pass',
      'pwd',
      'secret',
      'token',
      'access',
      'private',
      'credential',
      'auth',
      'encryption',
      'signing',
      'master',
      'account',
      'shared',
      'connection',
      'jwt',
    ],
    extend: '[^\\s"\'\\\\]',
    accept: acceptKeyValue,
  },
  {
    // `Cookie:` and `Set-Cookie:` headers: every `name=value; ...` pair is a secret, to the end
    // of the line.
    name: 'cookie-header',
    pattern: `(?i)((?:set-)?cookie)(${SEPARATOR})${valuePattern(true)}`,
    triggers: ['cookie'],
    extend: '[^\\s"\'\\\\]',
    accept: acceptKeyValue,
  },
  {
    // Signed URLs and cloud connection strings: the value runs to the next `&` or `;`.
    name: 'signed-url-connection-string',
    pattern:
      '(?i)(?<![A-Za-z0-9_-])(x-amz-(?:signature|credential|security-token)|x-goog-(?:signature|credential)|signature|sig|accountkey|sharedaccesskey|sharedaccesssignature)(=)[^&;\\s"\'\\\\<>]{6,4096}',
    triggers: ['x-amz-', 'x-goog-', 'signature', 'sig', 'accountkey', 'sharedaccess'],
    extend: '[^&;\\s"\'\\\\<>]',
  },
  {
    // Tokens, not prose: an all-lower-case word after "bearer" or "basic" is left alone.
    name: 'bearer-token',
    pattern: `${B}(?:Bearer|bearer|BEARER)\\s{1,16}(?![a-z]{1,64}(?![A-Za-z0-9._~+/=-]))[A-Za-z0-9._~+/-]{8,4096}={0,2}`,
    triggers: ['Bearer', 'bearer', 'BEARER'],
    extend: '[A-Za-z0-9._~+/=-]',
  },
  {
    name: 'basic-auth',
    pattern: `${B}(?:Basic|basic|BASIC)\\s{1,16}(?![a-z]{1,64}(?![A-Za-z0-9+/=]))[A-Za-z0-9+/]{8,4096}={0,2}`,
    triggers: ['Basic', 'basic', 'BASIC'],
    extend: '[A-Za-z0-9+/=]',
  },
  {
    // Keeps `://user:` and `@`; the user may be empty, the password may hold `/` and `@` (the
    // last `@` ends it); a URL cut before its `@` (end of text or `…`) loses the rest. A port
    // (`host:8080/path`) is not a password, nor is a `//` after the colon (`s3://:///`, a
    // scheme repeated: no user, no password).
    name: 'url-credentials',
    pattern:
      '(://[^\\s:/@"\'<>]{0,256}:)(?!\\d{1,5}(?:[/?#]|$|…))(?!//)[^\\s"\'<>]{1,256}?(@(?![^\\s"\'<>@]{0,256}@)|(?=…)|$)',
    triggers: ['://'],
  },
  {
    name: 'openai-anthropic-key',
    pattern: `${B}sk-[A-Za-z0-9_-]{8,4096}`,
    triggers: ['sk-'],
    extend: '[A-Za-z0-9_-]',
    accept: acceptOpenAiKey,
  },
  {
    name: 'aws-access-key-id',
    pattern: `${B}(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA|ABIA|ACCA)[0-9A-Z]{8,16}`,
    triggers: ['AKIA', 'ASIA', 'AGPA', 'AIDA', 'AROA', 'ANPA', 'ANVA', 'AIPA', 'ABIA', 'ACCA'],
    extend: '[0-9A-Z]',
  },
  {
    name: 'github-token',
    pattern: `${B}gh[pousr]_[A-Za-z0-9]{8,4096}`,
    triggers: ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_'],
    extend: '[A-Za-z0-9]',
  },
  {
    name: 'github-pat',
    pattern: `${B}github_pat_[A-Za-z0-9_]{1,4096}`,
    triggers: ['github_pat_'],
    extend: '[A-Za-z0-9_]',
  },
  {
    name: 'gitlab-pat',
    pattern: `${B}glpat-[A-Za-z0-9_-]{6,4096}`,
    triggers: ['glpat-'],
    extend: '[A-Za-z0-9_-]',
  },
  {
    name: 'slack-token',
    pattern: `${B}xox[abposre]-[A-Za-z0-9-]{6,4096}`,
    triggers: ['xox'],
    extend: '[A-Za-z0-9-]',
  },
  {
    name: 'slack-webhook',
    pattern: 'hooks\\.slack\\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{1,4096}',
    triggers: ['hooks.slack.com'],
    extend: '[A-Za-z0-9/_-]',
  },
  {
    name: 'google-api-key',
    pattern: `${B}AIza[0-9A-Za-z_-]{8,35}`,
    triggers: ['AIza'],
    extend: '[0-9A-Za-z_-]',
  },
  {
    name: 'google-oauth-token',
    pattern: `${B}ya29\\.[0-9A-Za-z_-]{6,4096}`,
    triggers: ['ya29.'],
    extend: '[0-9A-Za-z_-]',
  },
  {
    name: 'google-client-secret',
    pattern: `${B}GOCSPX-[0-9A-Za-z_-]{5,4096}`,
    triggers: ['GOCSPX-'],
    extend: '[0-9A-Za-z_-]',
  },
  {
    name: 'stripe-key',
    pattern: `${B}(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{4,4096}`,
    triggers: ['sk_live_', 'sk_test_', 'rk_live_', 'rk_test_', 'pk_live_', 'pk_test_'],
    extend: '[A-Za-z0-9]',
  },
  {
    name: 'stripe-webhook-secret',
    pattern: `${B}whsec_[A-Za-z0-9]{6,4096}`,
    triggers: ['whsec_'],
    extend: '[A-Za-z0-9]',
  },
  {
    name: 'npm-token',
    pattern: `${B}npm_[A-Za-z0-9]{36}`,
    triggers: ['npm_'],
    extend: '[A-Za-z0-9]',
  },
  {
    name: 'huggingface-token',
    pattern: `${B}hf_[A-Za-z0-9]{30,4096}`,
    triggers: ['hf_'],
    extend: '[A-Za-z0-9]',
  },
  {
    name: 'sendgrid-key',
    pattern: `${B}SG\\.[A-Za-z0-9_-]{16,4096}(?:\\.[A-Za-z0-9_-]{0,4096})?`,
    triggers: ['SG.'],
    extend: '[A-Za-z0-9_.-]',
  },
  {
    // Not after a base64 character nor `base64,`: a JWT starts a token, never the middle of
    // image data or a data URL. Header alone (a clipped token) is enough.
    name: 'jwt',
    pattern:
      '(?:(?<=\\\\[nrt])|(?<![A-Za-z0-9+/=_-]))(?<!base64,)eyJ[A-Za-z0-9_-]{8,4096}(?:\\.[A-Za-z0-9_-]{0,8192}){0,2}',
    triggers: ['eyJ'],
    extend: '[A-Za-z0-9_.-]',
  },
]);
