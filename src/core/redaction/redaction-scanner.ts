import type { RedactionRule } from './redaction-rules.js';

/**
 * One pass over a text for many prefix-anchored rules: a single alternation of every rule's
 * trigger literals finds the candidate positions, and at each one the rules of that trigger
 * are tried as sticky regexes, leftmost match first (like one combined regex, without its
 * per-position cost). Text between candidates is never looked at twice.
 */

/** Rewrites one match: the whole match and its capture groups, in order. */
export type MatchReplacer = (match: string, groups: readonly (string | undefined)[]) => string;

interface StickyRule {
  readonly regex: RegExp;
  readonly extend: ((text: string, end: number) => number) | undefined;
  readonly accept: RedactionRule['accept'];
}

/**
 * The extension of a match through a character class, as a plain loop (a lookup table for
 * ASCII): linear, whatever the length, and no regex backtrack stack.
 */
function extender(charClass: string): (text: string, end: number) => number {
  const test = new RegExp(`^${charClass}$`);
  const ascii = new Uint8Array(128);
  for (let code = 0; code < 128; code++) ascii[code] = test.test(String.fromCharCode(code)) ? 1 : 0;
  const inClass = (code: number) => (code < 128 ? ascii[code] === 1 : test.test(String.fromCharCode(code)));
  return (text, end) => {
    if (end === 0 || !inClass(text.charCodeAt(end - 1))) return end;
    let at = end;
    while (at < text.length && inClass(text.charCodeAt(at))) at++;
    return at;
  };
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** One character of a trigger: itself, or `[tT]` when matched in any letter case. */
function unit(char: string, insensitive: boolean): string {
  const lower = char.toLowerCase();
  const upper = char.toUpperCase();
  return insensitive && lower !== upper ? `[${lower}${upper}]` : escapeRegExp(char);
}

interface TrieNode {
  children: Map<string, TrieNode>;
  terminal: boolean;
}

/**
 * The triggers as one prefix-factored regex (`A(?:KIA|Iza)|sk(?:-|_live_)`): the engine
 * decides on the first character once instead of trying every trigger at every position.
 * Longer triggers win over their prefixes.
 */
export function triggerRegex(triggers: readonly { text: string; insensitive: boolean }[]): RegExp {
  const root: TrieNode = { children: new Map(), terminal: false };
  for (const { text, insensitive } of triggers) {
    let node = root;
    for (const char of text) {
      const key = unit(char, insensitive);
      let next = node.children.get(key);
      if (!next) {
        next = { children: new Map(), terminal: false };
        node.children.set(key, next);
      }
      node = next;
    }
    node.terminal = true;
  }
  const emit = (node: TrieNode): string => {
    const branches = [...node.children].map(([key, child]) => key + emit(child));
    if (branches.length === 0) return '';
    const group = branches.length === 1 ? branches[0]! : `(?:${branches.join('|')})`;
    return node.terminal ? `(?:${group})?` : group;
  };
  return new RegExp(emit(root), 'g');
}

/** Compiles a rule pattern (leading `(?i)` honoured) as a sticky regex. */
function sticky(pattern: string): RegExp {
  return pattern.startsWith('(?i)') ? new RegExp(pattern.slice(4), 'iy') : new RegExp(pattern, 'y');
}

/**
 * Builds the one-pass scanner of `rules` (each trigger must be where its matches start).
 * Returns a function that rewrites every match with `replace`.
 */
export function createRuleScanner(
  rules: readonly RedactionRule[],
  replace: MatchReplacer,
): (text: string) => string {
  const exact = new Map<string, StickyRule[]>();
  const folded = new Map<string, StickyRule[]>();
  const triggers: { text: string; insensitive: boolean }[] = [];
  for (const rule of rules) {
    const compiled: StickyRule = {
      regex: sticky(rule.pattern),
      extend: rule.extend ? extender(rule.extend) : undefined,
      accept: rule.accept,
    };
    const insensitive = rule.pattern.startsWith('(?i)');
    for (const trigger of rule.triggers) {
      const key = insensitive ? trigger.toLowerCase() : trigger;
      const map = insensitive ? folded : exact;
      const list = map.get(key);
      if (list) list.push(compiled);
      else {
        map.set(key, [compiled]);
        triggers.push({ text: trigger, insensitive });
      }
    }
  }
  if (triggers.length === 0) return (text) => text;
  const finder = triggerRegex(triggers);

  return (text: string) => {
    finder.lastIndex = 0;
    let out = '';
    let copied = 0;
    for (let hit = finder.exec(text); hit !== null; hit = finder.exec(text)) {
      const at = hit.index;
      const candidates = exact.get(hit[0]) ?? folded.get(hit[0].toLowerCase()) ?? [];
      let end = -1;
      for (const { regex, extend, accept } of candidates) {
        regex.lastIndex = at;
        const match = regex.exec(text);
        if (match === null || match[0].length === 0) continue;
        const groups = match.slice(1);
        const stop = extend ? extend(text, at + match[0].length) : at + match[0].length;
        const whole = stop === at + match[0].length ? match[0] : text.slice(at, stop);
        if (accept && !accept(whole, groups)) continue;
        out += text.slice(copied, at) + replace(whole, groups);
        end = stop;
        break;
      }
      if (end >= 0) {
        copied = end;
        finder.lastIndex = end;
      } else {
        // Triggers may overlap (`pass` inside `passpwd`): look again one character later.
        finder.lastIndex = at + 1;
      }
    }
    return copied === 0 ? text : out + text.slice(copied);
  };
}
