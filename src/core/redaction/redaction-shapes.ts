import { looksLikePlaceholder } from './redaction-placeholders.js';
import { type RedactionRule, urlAtGate } from './redaction-rule.js';
import { acceptKeyValue, bareValue, looksLikeKeyMaterial } from './redaction-values.js';

/**
 * Secret shapes that are neither a prefixed format nor a plain `key = value`: passwords on a
 * command line, keys whose name only contains a secret word (`SECRET_KEY_BASE=`,
 * `OPENAI_KEY=`), and a key in a URL's user part (a Sentry DSN).
 */

/** A value on a command line: quoted (at any JSON escape depth) or one word. */
const ARGUMENT =
  '(?:"[^"\\r\\n]{1,256}"?|\'[^\'\\r\\n]{1,256}\'?|\\\\{1,7}"[^"\\\\\\r\\n]{1,256}(?:\\\\{1,7}")?|[^\\s"\'|;&<>()`\\\\]{1,256})';
const ARGUMENT_CHAR = '[^\\s"\'|;&<>()`\\\\]';
/** Up to 16 other arguments before the one that holds the password. */
const OTHER_ARGUMENTS = '(?:[ \\t]{1,8}[^\\s|;&]{1,256}){0,16}?';

/** `1000:1000` after `-u` is a uid and gid; a `$VAR` or `$(cmd)` is a reference. */
function acceptUserPassword(match: string, groups: readonly (string | undefined)[]): boolean {
  const user = (groups[1] ?? '').trim();
  const value = match.slice((groups[0] ?? '').length + (groups[1] ?? '').length);
  if (/^["']?\d+:$/.test(user) && /^\d+$/.test(value)) return false;
  return acceptKeyValue(match, groups);
}

/** The scan's gate of `--password x`: its lookbehind needs a `-` right before the key word. */
const dashBefore = (text: string, at: number) => text.charCodeAt(at - 1) === 45;
const afterDash = () => dashBefore;

/** Passwords and tokens on command lines (group 1 and 2 are kept, the value is replaced). */
export const COMMAND_LINE_RULES: readonly RedactionRule[] = [
  {
    // `--password value`, `--password=value`, `--db-password "x"`, `--client-secret x`,
    // `--api-key x`, `--auth-token x`: the value is one argument (a `--password=` value no
    // longer takes the rest of the line).
    name: 'password-flag',
    pattern: `(?i)(?<=(?<![\\w-])--(?:[a-z0-9]{1,20}-){0,3})(passwd|password|pass|pwd|secret-key|secret|token|api-?key|access-key|private-key)(?![A-Za-z0-9_-])([ \\t]{1,8}|[ \\t]{0,4}=[ \\t]{0,4})(?!-)${ARGUMENT}`,
    triggers: ['pass', 'pwd', 'secret', 'token', 'api', 'access', 'private'],
    gate: afterDash,
    extend: ARGUMENT_CHAR,
    accept: acceptKeyValue,
  },
  {
    // `mysql -uroot -pS3cret db`: the password glued to `-p` (`-p` alone prompts). The
    // command is checked behind the `-p` (a trigger on `-p` costs less than one per command).
    name: 'mysql-password',
    pattern: `(?<=(?<![\\w-])(?:mysql(?:dump|admin|import|show|check|slap|sh)?|mariadb(?:-dump|-admin)?)${OTHER_ARGUMENTS}[ \\t]{1,8})(-p)()${ARGUMENT}`,
    triggers: ['-p'],
    extend: ARGUMENT_CHAR,
    accept: acceptKeyValue,
  },
  {
    // `docker login -u me -p S3cret`, `sshpass -p S3cret ssh host`.
    name: 'login-password',
    pattern: `(?<=(?<![\\w-])(?:(?:docker|podman|nerdctl|buildah|helm|skopeo)(?:[ \\t]{1,8}registry)?[ \\t]{1,8}login|sshpass)${OTHER_ARGUMENTS}[ \\t]{1,8})(-p)([ \\t]{0,8})(?!-)${ARGUMENT}`,
    triggers: ['-p'],
    extend: ARGUMENT_CHAR,
    accept: acceptKeyValue,
  },
  {
    // `curl -u user:S3cret`, `--user user:S3cret` (not `-u 1000:1000`).
    name: 'user-password-flag',
    pattern: `(?<![\\w-])(-u|--user)([ \\t]{1,8}["']?[^\\s:"'@/]{1,128}:)(?!//)[^\\s"'@]{1,256}`,
    triggers: ['-u', '--user'],
    extend: '[^\\s"\'@]',
    accept: acceptUserPassword,
  },
];

/** Key names that hold a key but are no lookup, sort or cache key. */
const NOT_SECRET_KEYS = [
  'sort',
  'cache',
  'primary',
  'foreign',
  'partition',
  'lookup',
  'hash',
  'range',
  'idempotency',
  'public',
  'object',
  'row',
  'map',
  'dict',
  'group',
  'index',
  'i18n',
  'translation',
  'unique',
  'composite',
  'dedup',
  'routing',
  'shard',
  'storage',
  'file',
  'state',
  'query',
  'item',
  'list',
  'node',
  'entry',
  'field',
  'column',
  'table',
  'message',
  'event',
  'react',
  'data',
  'ssh',
  'gpg',
  'pub',
  'hotkey',
  'short',
  'menu',
];
const NOT_LOWER = NOT_SECRET_KEYS.join('|');
const NOT_UPPER = NOT_LOWER.toUpperCase();

/** `key`, `Key`, `KEY` as a component after another (`api_key`, `openaiKey`, `OPENAI_KEY`). */
const KEY_WORD = [
  `(?<=[A-Za-z0-9][_-])(?<!(?:${NOT_LOWER})[_-])(?<!(?:${NOT_UPPER})[_-])(?:key|Key)(?![a-z])`,
  `(?<=[A-Za-z0-9][_-])(?<!(?:${NOT_UPPER})[_-])KEY(?![A-Z])`,
  `(?<=[a-z0-9])(?<!${NOT_LOWER})Key(?![a-z])`,
].join('|');
/** The words that make any name a secret's: `SECRET_KEY_BASE`, `refreshToken`, `db_password_v2`. */
const SECRET_WORD = [
  '(?<![A-Za-z])(?:secret|token|password|passwd|credentials?)(?![a-z])',
  '(?<![A-Z])(?:Secret|Token|Password|Passwd|Credentials?)(?![a-z])',
  '(?<![A-Za-z])(?:SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIALS?)(?![A-Z])',
].join('|');
/** The rest of the name: up to four more components (`_KEY_BASE`, `Id`, `-v2`). */
const NAME_TAIL = '(?:[_.-][A-Za-z0-9]{1,20}|[A-Z][a-z0-9]{0,19}){0,4}';
const KEY_CHARS = '[A-Za-z0-9_.=+/~-]';

/** `[A-Za-z0-9_.-]`: the characters of a key name. */
const isNameChar = (code: number) =>
  (code >= 97 && code <= 122) ||
  (code >= 65 && code <= 90) ||
  (code >= 48 && code <= 57) ||
  code === 95 ||
  code === 46 ||
  code === 45;
/** {@link KEY_CHARS}: a name's characters and `=+/~`. */
const isKeyChar = (code: number) =>
  isNameChar(code) || code === 61 || code === 43 || code === 47 || code === 126;
/**
 * `text.charCodeAt(index)`, or -1 past the end: no read out of bounds, which deoptimizes the
 * gates below each time the text ends within their reach (they then ran unoptimized).
 */
const codeAt = (text: string, index: number) => (index < text.length ? text.charCodeAt(index) : -1);
/** The index after at most `max` blanks (space, tab) from `at`. */
function skipBlanks(text: string, at: number, max: number): number {
  let index = at;
  while (index - at < max && (codeAt(text, index) === 32 || codeAt(text, index) === 9)) index++;
  return index;
}

/** From `at` (after a separator): `[ \t]{0,16}(?:\\{1,7}"|["'\`])?` and 12 key characters. */
function keyMaterialFrom(text: string, at: number): boolean {
  let index = skipBlanks(text, at, 16);
  const opening = index;
  while (index - opening < 7 && codeAt(text, index) === 92) index++;
  const code = codeAt(text, index);
  if (index > opening) {
    if (code !== 34) return false;
    index++;
  } else if (code === 34 || code === 39 || code === 96) index++;
  for (let run = 0; run < 12; run++) if (!isKeyChar(codeAt(text, index + run))) return false;
  return true;
}

/**
 * The secret-named-key rule's prefilter, without its regex: the name (a run of name
 * characters, at most 128), the separator (`\\{0,7}["']?[ \t]{0,16}` then `:=`, `=>`, `:` or
 * `=`) and 12 key characters after it. False only where the pattern cannot match (every way
 * to read the separator is tried); `token=a password=b` no longer runs the pattern's
 * lookbehinds at each key.
 */
function namedKeyMayStart(text: string, at: number): boolean {
  let index = at;
  while (index - at < 128 && isNameChar(codeAt(text, index))) index++;
  const name = index;
  while (index - name < 7 && codeAt(text, index) === 92) index++;
  if (codeAt(text, index) === 34 || codeAt(text, index) === 39) index++;
  index = skipBlanks(text, index, 16);
  const code = codeAt(text, index);
  const next = codeAt(text, index + 1);
  if (code === 58)
    return keyMaterialFrom(text, index + 1) || (next === 61 && keyMaterialFrom(text, index + 2));
  if (code !== 61) return false;
  return (
    (next !== 61 && keyMaterialFrom(text, index + 1)) || (next === 62 && keyMaterialFrom(text, index + 2))
  );
}
const namedKeyGate = () => namedKeyMayStart;

/**
 * A key name that contains a secret word and a compact value of key material:
 * `SECRET_KEY_BASE=<hex>`, `OPENAI_KEY=<40 chars>`, `"private_key_id": "<hex>"`. The value
 * must look like key material (`cache_key=user_123_profile` and `token_count: 128000` stay).
 */
export const NAMED_KEY_RULE: RedactionRule = {
  name: 'secret-named-key',
  pattern: `((?:${KEY_WORD}|${SECRET_WORD})${NAME_TAIL})(\\\\{0,7}["']?[ \\t]{0,16}(?::=|=>|:|=(?!=))[ \\t]{0,16})(?:\\\\{1,7}"|["'\`])?${KEY_CHARS}{12,4096}(?=[\\s"'\`,;)\\]}&<>|\\\\]|${KEY_CHARS}|$)`,
  // Found in any case (they share the scan with the `key = value` rule's), checked by case here.
  triggers: ['key', 'secret', 'token', 'passw', 'credential'],
  foldTriggers: true,
  gate: namedKeyGate,
  // Where the `key = value` rule is kept, its key is this name (a separator follows it), its
  // value reads on over every key character (`[^\s"'\\]`) and its extend takes them too: this
  // rule would end no further (`password=b` dense in hostile text skips this gate).
  coveredBy: 'key-value',
  // Where its gate refuses, the name is followed by `=` or `:` and at most nine letters that
  // end at a blank or `,;)]}`: fewer than the 12 key characters this rule needs.
  refusedWith: 'key-value',
  extend: KEY_CHARS,
  // A name called right after (`token = contextManager.attach(x)`) is code.
  accept: (match, groups, text, start) =>
    !/^(?:\?\.)?\(/.test(text.slice(start + match.length, start + match.length + 3)) &&
    looksLikeKeyMaterial(bareValue(match, groups).replace(/^`/, '')) &&
    !looksLikePlaceholder(bareValue(match, groups), groups[0] ?? ''),
};

/**
 * A URL's password after its `:`, and the `@` that ends it (the last one: a password may hold
 * `/` and `@`), or the end of a URL cut before it (end of text or `…`). A port (`host:8080/path`)
 * is not a password, nor is a `//` after the colon (`s3://:///`, a scheme repeated).
 */
export const URL_PASSWORD =
  '(?!\\d{1,5}(?:[/?#]|$|…))(?!//)[^\\s"\'<>]{1,256}?(@(?![^\\s"\'<>@]{0,256}@)|(?=…)|$)';

/** True for a URL's user part that is a key, not a user name: letters and digits, not `name42`. */
const keyLikeUser = (user: string) =>
  /[0-9]/.test(user) && /[A-Za-z]/.test(user) && !/^[a-z]+(?:[._-][a-z]+)*[0-9]{0,4}$/.test(user);

/**
 * A key in a URL's user part with no password (a Sentry DSN, `https://<key>@o1.ingest.sentry.io/2`):
 * 16 or more characters with letters and digits, not a user name.
 */
export const URL_USER_KEY_RULE: RedactionRule = {
  name: 'url-user-key',
  pattern: '(://)[A-Za-z0-9_-]{16,256}(@)',
  triggers: ['://'],
  gate: urlAtGate,
  accept: (match) => keyLikeUser(match.slice(3, -1)),
};

/**
 * A key in a URL's user part with a password after it (GitHub's token as the user,
 * `git+https://<token>:x-oauth-basic@github.com/...` in package.json, secretlint's npm rule):
 * user and password go together. Before `url-credentials`, which ends at the same `@` and
 * keeps the user; its password shapes (the last `@`, no port, a clipped URL) are its own.
 */
export const URL_KEY_USER_RULE: RedactionRule = {
  name: 'url-key-user',
  pattern: `(://)[A-Za-z0-9_-]{16,256}:${URL_PASSWORD}`,
  triggers: ['://'],
  gate: urlAtGate,
  accept: (match) => keyLikeUser(match.slice(3, match.indexOf(':', 3))),
};
