import { releaseRegExpCode } from '../process-caches.js';
import { pathEnd } from './redaction-placeholders.js';

/**
 * The code-shape readers of the `key = value` rule: an unquoted value that names a secret
 * instead of holding it (`getToken()`, `req.body.password;`, `${TOKEN}`) is no secret.
 */

/** Objects whose fields hold a secret by reference: `process.env.X`, `req.body.password`. */
const CODE_ROOTS =
  /^(?:this|self|cls|process|os|env|req|request|res|response|ctx|context|config|cfg|conf|settings|options|opts|args|argv|params|props|state|data|body|headers|user|auth|session|secrets|vault|credentials|creds|window|document|localStorage|sessionStorage|import|module|app|client|provider|store)\b/;
/** An identifier path: `a`, `a.b`, `a?.b`, `a::b`, `a->b`. */
const PATH_SEPARATOR = /\?\.|\.|::|->/;
/**
 * An identifier made of words, as code names are (`getToken`, `HTTPBasicAuth`, `OPENAI_API_KEY`,
 * `req`), not random characters (`AbCdEfGh`, `AAAAAAAAAAA`, `x9Qz`).
 */
const WORDY = /^(?:[A-Z]{2,8}(?![a-z])|[A-Z]?[a-z]{2,}|[0-9]{1,2}|[_$])+$/;
const wordy = (path: string) =>
  hasSeparator(path) ? path.split(PATH_SEPARATOR).every((part) => WORDY.test(part)) : WORDY.test(path);
/** `/[.:>]/.test(path)`, without a regex. */
function hasSeparator(path: string): boolean {
  for (let index = 0; index < path.length; index++) {
    const code = path.charCodeAt(index);
    if (code === 46 || code === 58 || code === 62) return true;
  }
  return false;
}

/**
 * Code that names a secret instead of holding it, after `key =` or `key:` unquoted (`rest` is
 * the text from the value to the end of its line): a call or an index whose brackets close
 * (`getToken()`, `os.environ["X"]`, `await fetchToken()`), a property path that ends the
 * statement or starts at a well-known object (`req.body.password;`, `process.env.OPENAI_API_KEY`),
 * a variable or template reference (`$TOKEN`, `${TOKEN}`, `${{ secrets.X }}`,
 * `{{ .Values.x }}`, `%TOKEN%`), a template literal with a placeholder, or an identifier that
 * repeats the key's word (`token = token`, `password: userPassword,`). Names must be made of
 * words: `AbCdEf(1)` may be a password.
 */
export function looksLikeCode(rest: string, key: string): boolean {
  const head = rest.charCodeAt(0);
  // `$`, `{`, `%` or a backtick start a reference or a template; a name starts anything else.
  if (head === 36 || head === 123 || head === 37 || head === 96) {
    if (looksLikeReference(rest)) return true;
    if (head !== 36) return false;
  }
  const lead = head === 97 || head === 110 || head === 121 ? /^(?:await|new|yield)\s+/.exec(rest) : null;
  const code = lead ? rest.slice(lead[0].length) : rest;
  const end = pathEnd(code, true);
  if (end < 0) return false;
  const path = code.slice(0, end);
  if (!wordy(path)) return false;
  const after = code.slice(path.length);
  // A call or an index whose bracket closes and ends the expression: `getToken();`, `env["X"]`.
  const bracket = /^\s{0,4}[([]/.exec(after);
  // The called or indexed name's last word has three letters or more (`xy(AB)` may be a password).
  // Its last part holds a lower-case letter (`AAA(B)` may be a password), and what it is called
  // with reads as code too: nothing, quoted strings, numbers, word-made names.
  if (bracket)
    return (
      /[A-Za-z]{3}[\w$]*$/.test(path) &&
      /[a-z]/.test(path.split(PATH_SEPARATOR).at(-1) ?? '') &&
      closes(after, bracket[0].length - 1) &&
      argumentsLookLikeCode(after, bracket[0].length - 1)
    );
  const parts = path.split(PATH_SEPARATOR).length;
  // `a.b;` ends a statement; `a.b` alone at the end may be a password with a dot.
  const statementEnd = /^\s{0,4}(?:[;,)\]}]|\|\||\?\?|&&)/.test(after);
  if (parts >= 2 && ends(after) && (statementEnd || parts >= 3 || CODE_ROOTS.test(path))) return true;
  if (parts === 1 && (statementEnd || /^\s*$/.test(after)) && !/\d/.test(path)) {
    // `token = token`, `password: userPassword,`, `apiKey = api_key;`
    const word = /pass|pwd|secret|token|key|auth|cred|jwt|cookie/i.exec(key)?.[0];
    const named = word !== undefined && path.toLowerCase().includes(word.toLowerCase());
    // `mypassword` may be the password itself; `userPassword`, `api_key`, `token` are names.
    if (named && (/[a-z][A-Z]|_/.test(path) || path.toLowerCase() === key.toLowerCase())) return true;
  }
  return false;
}

/** A variable or template reference (`$TOKEN`, `${TOKEN}`, `${{ secrets.X }}`, `%TOKEN%`, `$(cmd)`). */
function looksLikeReference(rest: string): boolean {
  const reference =
    /^(?:\$\{\{[^}]{1,256}\}\}|\{\{[^}]{1,256}\}\}|\$\{[A-Za-z_][\w.:-]{0,63}\}|%[A-Za-z_]\w{0,63}%)/.exec(
      rest,
    );
  if (reference) {
    // `%A%&AAAAAAAAAAAA`: an operator glued to more of the value goes on with it (the
    // property found it, seed 1101, 20,000 runs); `%X%&&echo hi` ends the reference.
    const after = rest.slice(reference[0].length);
    GLUED_OPERATOR_VALUE.lastIndex = 0;
    if (ends(after) && !GLUED_OPERATOR_VALUE.test(after)) return true;
  }
  if (rest.startsWith('$(') && closes(rest, 1)) return true;
  // `$DB_PASSWORD`: upper-case words (a random `$AAAAAAAAAAAA` may be the password).
  const variable = /^\$([A-Z_][A-Z0-9_]{2,63})(?=$|[\s;'"}])/.exec(rest);
  if (variable?.[1]?.split('_').every(isWordPart)) return true;
  return /^`[^`]{0,512}\$\{[^`]{0,512}`/.test(rest);
}

/** Up to four of `&|?` glued to an alphanumeric and five more non-blanks: more of a value. */
const GLUED_OPERATOR_VALUE = /[&|?]{1,4}[A-Za-z0-9][^\s]{5}/y;

/** An expression ends here: the end, a blank, a closing bracket, a separator, a method call. */
const ends = (after: string) => /^(?:$|\s|[;,)\]}"'`&|?]|\.[A-Za-z_$])/.test(after);
const isWordPart = (part: string) => /^(?:[A-Z]{1,10}[0-9]{0,2})?$/.test(part);

/** One argument of a call or index that reads as code: a quoted string, a number, a word-made name. */
const ARGUMENT =
  /^\s*(?:"[^"]{0,256}"|'[^']{0,256}'|\d{1,12}|[A-Za-z_$][\w$]{0,63}(?:\.[A-Za-z_$][\w$]{0,63}){0,8})\s*$/;

/** What the bracket at `open` encloses reads as code (see {@link ARGUMENT}); nested brackets are let be. */
function argumentsLookLikeCode(text: string, open: number): boolean {
  const close = text.indexOf(text[open] === '(' ? ')' : ']', open);
  if (close < 0) return false;
  const inner = text.slice(open + 1, close);
  if (/[([{]/.test(inner)) return true;
  if (inner.trim() === '') return true;
  return inner.split(',').every((part) => {
    if (!ARGUMENT.test(part)) return false;
    const name = part.trim();
    return /^["'\d]/.test(name) || name.split('.').every((word) => WORDY.test(word));
  });
}

/** The bracket at `open` closes (same kind) and the expression ends right after it. */
function closes(text: string, open: number): boolean {
  const opener = text[open];
  const closer = opener === '(' ? ')' : opener === '[' ? ']' : '}';
  let depth = 0;
  for (let index = open; index < text.length; index++) {
    const char = text[index];
    if (char === opener) depth++;
    else if (char === closer && --depth === 0) return ends(text.slice(index + 1, index + 3));
  }
  return false;
}

// Their machine code is dropped when the last manager shuts down (process-caches.ts).
releaseRegExpCode(CODE_ROOTS, PATH_SEPARATOR, WORDY, GLUED_OPERATOR_VALUE, ARGUMENT);
