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

/** A literal matched in any letter case, as a character-class sequence (`[tT][oO]...`). */
function anyCase(text: string): string {
  return [...text]
    .map((char) => {
      const lower = char.toLowerCase();
      const upper = char.toUpperCase();
      return lower === upper ? escapeRegExp(char) : `[${lower}${upper}]`;
    })
    .join('');
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
  const alternatives: string[] = [];
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
        alternatives.push(insensitive ? anyCase(trigger) : escapeRegExp(trigger));
      }
    }
  }
  if (alternatives.length === 0) return (text) => text;
  // Longer literals first, so a trigger that is a prefix of another never hides it.
  alternatives.sort((a, b) => b.length - a.length);
  const finder = new RegExp(alternatives.join('|'), 'g');

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
