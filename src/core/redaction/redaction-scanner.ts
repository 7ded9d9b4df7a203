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
    const compiled = { regex: sticky(rule.pattern) };
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
      for (const { regex } of candidates) {
        regex.lastIndex = at;
        const match = regex.exec(text);
        if (match === null || match[0].length === 0) continue;
        out += text.slice(copied, at) + replace(match[0], match.slice(1));
        end = at + match[0].length;
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
