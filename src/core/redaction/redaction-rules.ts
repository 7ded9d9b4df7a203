import { GITLEAKS_FAMILY_RULES } from './gitleaks-families.js';
import { GITLEAKS_GAP_RULES } from './gitleaks-gaps.js';
import { keyValueMayHold } from './key-value-may-hold.js';
import { PROVIDER_RULES } from './redaction-families.js';
import { B, type RedactionRule, urlAtGate } from './redaction-rule.js';
import {
  COMMAND_LINE_RULES,
  NAMED_KEY_RULE,
  URL_KEY_USER_RULE,
  URL_PASSWORD,
  URL_USER_KEY_RULE,
} from './redaction-shapes.js';
import { acceptKeyValue } from './redaction-values.js';

export type { RedactionRule } from './redaction-rule.js';
export { looksLikePath } from './redaction-values.js';

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
 * Coverage follows the rule families of gitleaks and secretlint (`redaction-families.ts` for
 * the prefixed provider formats, `redaction-shapes.ts` for command lines and suffixed key
 * names).
 */

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
export const SEPARATOR = '\\\\{0,7}["\']?[ \\t]{0,16}(?::=|=>|:|=(?!=))[ \\t]{0,16}';

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
export function valuePattern(toLineEnd: boolean): string {
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
/** A line break, raw or JSON-escaped (at any depth). */
const PEM_BREAK = '(?:\\r?\\n|(?:\\\\{1,7}r)?\\\\{1,7}n)';
const PEM_FIELD = '(?:Proc-Type|DEK-Info|Comment):[^\\r\\n\\\\]{0,256}';
/**
 * A body line without an END line after it: a whole base64 line of 16 or more characters,
 * one with a digit, `+`, `/` or `=`, or the text's last (a clipped key's tail), or a header
 * field. A line of prose or code after a clipped key (`next line`, `else`) is no key
 * material; a line at the 4,096 bound goes on through the rule's `extend`.
 */
const PEM_LINE = `(?:[A-Za-z0-9+/=]{4096}|(?=[A-Za-z]{0,15}[0-9+/=]|[A-Za-z0-9+/=]{16}|[A-Za-z]{1,15}[ \\t]{0,8}(?:$|…|["'\\\\]))[A-Za-z0-9+/=]{1,4095}(?![A-Za-z0-9+/=])(?=[ \\t]{0,8}(?:${PEM_BREAK}|$|…|["'\\\\])))`;
const PEM_BODY = `(?:(?:[ \\t]{0,8}${PEM_BREAK}){1,2}(?:${PEM_LINE}|${PEM_FIELD})){0,8192}`;
/**
 * A whole block: base64 runs and header fields between BEGIN and END, on lines or on one line
 * (`-----BEGIN ... KEY----- MIIE... -----END ... KEY-----` from a flattened variable). Anything
 * else between the two (code that names both markers) is no key: only the markers' own text,
 * left alone, is matched then.
 */
const PEM_SEPARATOR = `(?:[ \\t]{1,8}|[ \\t]{0,8}${PEM_BREAK}){1,2}`;
const PEM_BLOCK = `(?:${PEM_SEPARATOR}(?:[A-Za-z0-9+/=]{1,4096}(?![A-Za-z0-9+/=])|${PEM_FIELD})){1,8192}${PEM_SEPARATOR}${PEM_FOOTER}`;

/**
 * A clipped block flattened onto one line (no END): base64 runs of 16 or more characters after
 * the header, separated by spaces, and a shorter tail (a summary's line cut mid-key).
 */
const PEM_FLAT = `(?:[ \\t]{1,8}[A-Za-z0-9+/=]{16,4096}(?![A-Za-z0-9+/=])){1,8192}(?:[ \\t]{1,8}[A-Za-z0-9+/=]{1,15}(?![A-Za-z0-9+/=]))?`;

/** A PEM match holds key material, not only its markers (`'-----BEGIN PRIVATE KEY-----'` in code). */
function acceptPem(match: string): boolean {
  const body = match.replace(new RegExp(PEM_HEADER), '').replace(new RegExp(PEM_FOOTER), '');
  return /[A-Za-z0-9+/]/.test(body.replace(/\\+[rn]/g, ''));
}

/** The default rules, in the order they run (PEM first: other rules would cut its body). */
export const DEFAULT_REDACTION_RULES: readonly RedactionRule[] = Object.freeze([
  {
    // No END line (clipped): the base64 lines after BEGIN are key material, up to the first
    // line that is not base64 (prose after a clipped key stays).
    name: 'pem-private-key',
    pattern: `${PEM_HEADER}(?:${PEM_BLOCK}|${PEM_FLAT}|${PEM_BODY})`,
    triggers: ['-----BEGIN'],
    extend: '[A-Za-z0-9+/=]',
    accept: acceptPem,
  },
  ...COMMAND_LINE_RULES,
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
    // `token=a` (a word that is no value, dense in hostile text) is refused before the regex.
    gate: () => keyValueMayHold,
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
  NAMED_KEY_RULE,
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
    // `basic JavaScript types`: a word, not base64 (which has a digit, `+/=`, or length).
    accept: (match) => {
      const value = match.replace(/^\w+\s+/, '');
      return /[0-9+/=]/.test(value) || value.length >= 16;
    },
  },
  URL_KEY_USER_RULE,
  {
    // Keeps `://user:` and `@`; the user may be empty, the password may hold `/` and `@` (the
    // last `@` ends it); a URL cut before its `@` (end of text or `…`) loses the rest. A port
    // (`host:8080/path`) is not a password, nor is a `//` after the colon (`s3://:///`, a
    // scheme repeated: no user, no password).
    name: 'url-credentials',
    pattern: `(://[^\\s:/@"'<>]{0,256}:)${URL_PASSWORD}`,
    triggers: ['://'],
    gate: urlAtGate,
    // `redis://:password@host`, `://user:authpassword@`: a placeholder in docs. A short
    // `pass` is a password as secretlint's basicauth rule reads it (`https://user:pass@host`).
    accept: (match, groups) => {
      const password = match.slice((groups[0] ?? '').length, match.length - (groups[1] ?? '').length);
      return !/^(?:[a-z]{0,12}password|secret|changeme|\*+|x+|<[^<>]{1,64}>)$/i.test(password);
    },
  },
  URL_USER_KEY_RULE,
  // gitleaks' exact shapes first: where one holds, the whole token goes (a routable GitLab
  // token's tail too); the hand-written formats catch the rest, clipped keys included.
  ...GITLEAKS_FAMILY_RULES,
  ...GITLEAKS_GAP_RULES,
  ...PROVIDER_RULES,
]);
