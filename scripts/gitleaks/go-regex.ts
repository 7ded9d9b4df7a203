/**
 * Go (RE2) regular expressions, as gitleaks writes them, translated to JavaScript sources
 * that Node 20 compiles without the `u` flag: inline flags (`(?i)` for the rest of a group,
 * `(?i:...)`, `(?-i:...)`, `(?s:...)`) become explicit letter classes (`[aA]`) and `[\s\S]`,
 * `(?P<name>` becomes `(?<name>`, `\z` and `\A` become end and start of input. What cannot be
 * translated (POSIX classes, `\Q...\E`, Unicode classes) is an error naming the construct.
 */

/** A Go construct with no translation. */
export class UntranslatableRegexError extends Error {}

interface Flags {
  insensitive: boolean;
  dotAll: boolean;
}

const isLetter = (char: string) => char.toLowerCase() !== char.toUpperCase() && char.length === 1;
const other = (char: string) => (char === char.toLowerCase() ? char.toUpperCase() : char.toLowerCase());

/**
 * Translates one Go pattern; the result is a source for `new RegExp(source)` (no flags).
 * `caseAsWritten` drops `(?i)` (letters match as written): a generator draws from it the
 * canonical shape the rule's author wrote (`-----BEGIN`, not `-----bEgIn`).
 */
export function translateGoRegex(pattern: string, options: { caseAsWritten?: boolean } = {}): string {
  let at = 0;
  const stack: Flags[] = [];
  let flags: Flags = { insensitive: false, dotAll: false };
  const keepCase = options.caseAsWritten === true;
  let out = '';
  while (at < pattern.length) {
    const char = pattern[at]!;
    if (char === '\\') {
      const [text, next] = escapeOutsideClass(pattern, at, flags);
      out += text;
      at = next;
    } else if (char === '[') {
      const [text, next] = charClass(pattern, at, flags);
      out += text;
      at = next;
    } else if (char === '(') {
      const flagGroup = /^\(\?([a-zA-Z-]*)(:|\))/.exec(pattern.slice(at));
      if (pattern.startsWith('(?P<', at)) {
        stack.push({ ...flags });
        out += '(?<';
        at += 4;
      } else if (flagGroup && !/^\(\?[=!<]/.test(pattern.slice(at))) {
        const changed = applyFlags(flags, flagGroup[1]!);
        if (keepCase) changed.insensitive = false;
        if (flagGroup[2] === ')') {
          // `(?i)`: the rest of the current group.
          flags = changed;
        } else {
          stack.push({ ...flags });
          flags = changed;
          out += '(?:';
        }
        at += flagGroup[0].length;
      } else {
        stack.push({ ...flags });
        const lookaround = /^\(\?(?:[:=!]|<[=!])/.exec(pattern.slice(at))?.[0];
        out += lookaround ?? '(';
        at += lookaround?.length ?? 1;
      }
    } else if (char === ')') {
      flags = stack.pop() ?? flags;
      out += ')';
      at++;
    } else if (char === '.') {
      out += flags.dotAll ? '[\\s\\S]' : '.';
      at++;
    } else if (isLetter(char) && flags.insensitive) {
      out += `[${char}${other(char)}]`;
      at++;
    } else if (char === '{' && /^\{(\d*),?(\d*)\}/.test(pattern.slice(at))) {
      const bound = /^\{(\d*),?(\d*)\}/.exec(pattern.slice(at))![0];
      out += bound;
      at += bound.length;
    } else {
      out += char;
      at++;
    }
  }
  return out;
}

function applyFlags(flags: Flags, spec: string): Flags {
  const next = { ...flags };
  let on = true;
  for (const flag of spec) {
    if (flag === '-') on = false;
    else if (flag === 'i') next.insensitive = on;
    else if (flag === 's') next.dotAll = on;
    else if (flag === 'm' || flag === 'U') throw new UntranslatableRegexError(`flag ${flag}`);
  }
  return next;
}

/** One escape outside a class. */
function escapeOutsideClass(pattern: string, at: number, flags: Flags): [string, number] {
  const next = pattern[at + 1];
  if (next === undefined) throw new UntranslatableRegexError('trailing backslash');
  if (next === 'z') return ['(?![\\s\\S])', at + 2];
  if (next === 'A') return ['(?<![\\s\\S])', at + 2];
  if (next === 'Q' || next === 'p' || next === 'P' || next === 'C') {
    throw new UntranslatableRegexError(`\\${next}`);
  }
  if (next === 'x' && pattern[at + 2] === '{') {
    const end = pattern.indexOf('}', at);
    return [`\\u${pattern.slice(at + 3, end).padStart(4, '0')}`, end + 1];
  }
  if (isLetter(next) && /[a-zA-Z]/.test(next) && !'dDwWsSbBnrtfvx0'.includes(next)) {
    throw new UntranslatableRegexError(`\\${next}`);
  }
  if (next === 'x') return [pattern.slice(at, at + 4), at + 4];
  if (isLetter(next) || /[0-9]/.test(next)) return [pattern.slice(at, at + 2), at + 2];
  // An escaped punctuation character is itself; letters under `(?i)` never reach here.
  void flags;
  return [`\\${next}`, at + 2];
}

const POSIX_CLASSES: Record<string, string> = {
  alnum: 'A-Za-z0-9',
  alpha: 'A-Za-z',
  digit: '0-9',
  lower: 'a-z',
  upper: 'A-Z',
  xdigit: '0-9A-Fa-f',
  space: '\\s',
  word: '\\w',
  punct: '!-\\/:-@\\[-`{-~',
};

/** A bracket class: under `(?i)` each letter and letter range gets its other case. */
function charClass(pattern: string, at: number, flags: Flags): [string, number] {
  let index = at + 1;
  let head = '[';
  let out = '';
  if (pattern[index] === '^') {
    head += '^';
    index++;
  }
  if (pattern[index] === ']') {
    out += '\\]';
    index++;
  }
  const extra: string[] = [];
  while (index < pattern.length && pattern[index] !== ']') {
    const posix = /^\[:(\w+):\]/.exec(pattern.slice(index, index + 12));
    if (posix) {
      const named = POSIX_CLASSES[posix[1]!];
      if (named === undefined) throw new UntranslatableRegexError(`POSIX class ${posix[0]}`);
      out += named;
      index += posix[0].length;
      continue;
    }
    let item: string;
    let low: string | undefined;
    if (pattern[index] === '\\') {
      const next = pattern[index + 1]!;
      if (next === 'p' || next === 'P') throw new UntranslatableRegexError(`\\${next} in a class`);
      if (next === 'x' && pattern[index + 2] === '{') {
        const end = pattern.indexOf('}', index);
        item = `\\u${pattern.slice(index + 3, end).padStart(4, '0')}`;
        index = end + 1;
      } else if (next === 'x') {
        item = pattern.slice(index, index + 4);
        index += 4;
      } else {
        item = pattern.slice(index, index + 2);
        index += 2;
      }
    } else {
      item = pattern[index]!;
      low = item;
      index++;
    }
    // A range `a-z`.
    if (pattern[index] === '-' && pattern[index + 1] !== ']' && low !== undefined) {
      const high = pattern[index + 1]!;
      index += 2;
      out += `${low}-${high}`;
      if (flags.insensitive && /[a-zA-Z]/.test(low) && /[a-zA-Z]/.test(high)) {
        extra.push(`${other(low)}-${other(high)}`);
      }
      continue;
    }
    out += item === '[' ? '\\[' : item;
    if (flags.insensitive && low !== undefined && isLetter(low)) extra.push(other(low));
  }
  if (pattern[index] !== ']') throw new UntranslatableRegexError('unclosed class');
  // The other cases go first: after a trailing `-` they would make a range.
  return [`${head}${extra.join('')}${out}]`, index + 1];
}
