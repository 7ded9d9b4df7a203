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
  readonly order: number;
  readonly regex: RegExp;
  readonly extend: ((text: string, end: number) => number) | undefined;
  readonly back: ((text: string, start: number, floor: number) => number) | undefined;
  readonly accept: RedactionRule['accept'];
  /** Index of the rule's gate in a scan's gates, or -1. */
  readonly gate: number;
  /** The order of the rule that covers this one ({@link RedactionRule.coveredBy}), or -1. */
  readonly coveredBy: number;
  /** The order of the rule whose gate refuses for this one too ({@link RedactionRule.refusedWith}), or -1. */
  readonly refusedWith: number;
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

/**
 * The extension of a match backwards through a character class, at most `max` characters and
 * never into text already replaced (`floor`): a key whose recognizable part sits in its middle
 * (`<32 hex>-us6`, `<14>.atlasv1.`) is replaced whole.
 */
function backExtender(
  charClass: string,
  max: number,
): (text: string, start: number, floor: number) => number {
  const test = new RegExp(`^${charClass}$`);
  return (text, start, floor) => {
    const limit = Math.max(floor, start - max);
    let at = start;
    while (at > limit && test.test(text[at - 1]!)) at--;
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
 * Longer triggers win over their prefixes (an exact trigger over a case-folded one that
 * starts the same way). The first character is matched in any case, so the root has one
 * branch per letter, however many triggers start with it in either case.
 */
export function triggerRegex(triggers: readonly { text: string; insensitive: boolean }[]): RegExp {
  const root: TrieNode = { children: new Map(), terminal: false };
  for (const { text, insensitive } of triggers) {
    let node = root;
    let first = true;
    for (const char of text) {
      // The first character in any case: one branch per letter at the root (the engine tests
      // the root's branches one by one at each position); a hit in the wrong case finds no
      // candidate rule and costs one look-up.
      const key = unit(char, insensitive || first);
      first = false;
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
    // Exact branches first: where an exact trigger and a case-folded one share a start
    // (`access_token$`, `[aA][cC]...`), the longer exact one is found, and the scanner tries
    // the folded one too as its prefix.
    const children = [...node.children].sort(
      ([a], [b]) => Number(a.startsWith('[')) - Number(b.startsWith('[')),
    );
    const branches = children.map(([key, child]) => key + emit(child));
    if (branches.length === 0) return '';
    const group = branches.length === 1 ? branches[0]! : `(?:${branches.join('|')})`;
    return node.terminal ? `(?:${group})?` : group;
  };
  return new RegExp(emit(root), 'g');
}

/** A rule to try at a trigger, and the longer triggers one of which must be there, if any. */
interface Candidate {
  readonly rule: StickyRule;
  readonly needs: readonly { readonly text: string; readonly fold: boolean }[] | undefined;
}

/** `text` holds `literal` at `at` (in any letter case when `fold`; `literal` is lower case then). */
function holdsAt(text: string, at: number, literal: string, fold: boolean): boolean {
  if (!fold) return text.startsWith(literal, at);
  if (at + literal.length > text.length) return false;
  for (let index = 0; index < literal.length; index++) {
    let code = text.charCodeAt(at + index);
    if (code >= 65 && code <= 90) code += 32;
    if (code !== literal.charCodeAt(index)) return false;
  }
  return true;
}

const NO_GROUPS: (string | undefined)[] = [];

/** One of `needs` holds at `at`. */
function holdsAny(text: string, at: number, needs: Candidate['needs'] & {}): boolean {
  for (const need of needs) if (holdsAt(text, at, need.text, need.fold)) return true;
  return false;
}

/** Compiles a rule pattern (leading `(?i)` honoured) as a sticky regex. */
function sticky(pattern: string): RegExp {
  return pattern.startsWith('(?i)') ? new RegExp(pattern.slice(4), 'iy') : new RegExp(pattern, 'y');
}

/** Hears one replacement: `text.slice(start, end)` becomes `replacement` (calls in text order). */
export type MatchSink = (start: number, end: number, replacement: string) => void;

/**
 * The scanner's matching half: reports each replacement (non-overlapping, left to right)
 * instead of building the new text, so a caller can map them onto another text (the
 * unicode-escape pass maps matches in a decoded copy back to the raw text).
 */
export function createRuleMatcher(
  rules: readonly RedactionRule[],
  replace: MatchReplacer,
): (text: string, sink: MatchSink) => void {
  const exact = new Map<string, StickyRule[]>();
  const folded = new Map<string, StickyRule[]>();
  const triggers: { text: string; insensitive: boolean }[] = [];
  const gateMakers: (() => (text: string, at: number) => boolean)[] = [];
  const gateIndex = (make: () => (text: string, at: number) => boolean) => {
    const known = gateMakers.indexOf(make);
    return known >= 0 ? known : gateMakers.push(make) - 1;
  };
  rules.forEach((rule, order) => {
    const compiled: StickyRule = {
      order,
      regex: sticky(rule.pattern),
      extend: rule.extend ? extender(rule.extend) : undefined,
      back: rule.extendBack ? backExtender(rule.extendBack.chars, rule.extendBack.max) : undefined,
      accept: rule.accept,
      // Rules that share a gate (the URL rules' `@`) share its state in a scan: one search.
      gate: rule.gate ? gateIndex(rule.gate) : -1,
      coveredBy: rule.coveredBy ? rules.findIndex(({ name }) => name === rule.coveredBy) : -1,
      refusedWith: rule.refusedWith ? rules.findIndex(({ name }) => name === rule.refusedWith) : -1,
    };
    const insensitive = rule.pattern.startsWith('(?i)') || rule.foldTriggers === true;
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
  });
  if (triggers.length === 0) return () => {};
  const finder = triggerRegex(triggers);
  // The finder reports the longest trigger at a position; the rules of every shorter trigger
  // that is a prefix of it (`pass` under `password`, a case-folded `secret` under an exact
  // `secret_`) are candidates too, in rule order.
  const byHit = new Map<string, readonly Candidate[]>();
  const candidatesOf = (hit: string): readonly Candidate[] => {
    let list = byHit.get(hit);
    if (list === undefined) {
      // A rule found by a trigger the hit ends (or is) is tried as is; one found only by a
      // longer trigger that the hit starts is tried where the text holds that trigger.
      const sure = new Set<StickyRule>();
      for (let length = 1; length <= hit.length; length++) {
        const prefix = hit.slice(0, length);
        for (const rule of exact.get(prefix) ?? []) sure.add(rule);
        for (const rule of folded.get(prefix.toLowerCase()) ?? []) sure.add(rule);
      }
      // The finder's alternation stops at the first trigger it completes (an exact `eyJ`
      // before a folded `eyjrijoi`): a longer trigger that the hit starts is a candidate too
      // (its sticky regex checks the rest).
      const longer = new Map<StickyRule, { text: string; fold: boolean }[]>();
      const lower = hit.toLowerCase();
      const add = (rule: StickyRule, text: string, fold: boolean) => {
        if (sure.has(rule)) return;
        const needs = longer.get(rule) ?? [];
        needs.push({ text, fold });
        longer.set(rule, needs);
      };
      for (const [trigger, rules] of exact) {
        if (trigger.length > hit.length && trigger.startsWith(hit))
          for (const rule of rules) add(rule, trigger, false);
      }
      for (const [trigger, rules] of folded) {
        if (trigger.length > hit.length && trigger.startsWith(lower))
          for (const rule of rules) add(rule, trigger, true);
      }
      list = [
        ...[...sure].map((rule) => ({ rule, needs: undefined })),
        ...[...longer].map(([rule, needs]) => ({ rule, needs })),
      ].sort((a, b) => a.rule.order - b.rule.order);
      if (byHit.size < 4096) byHit.set(hit, list);
    }
    return list;
  };

  return (text, sink) => {
    const gates = gateMakers.map((make) => make());
    finder.lastIndex = 0;
    let copied = 0;
    // Text dense with a few triggers (`token=a password=b secret=c ...`) asks for the same
    // lists again and again: the last four are compared as strings, not hashed into the map.
    const recentHits = ['', '', '', ''];
    const recentLists: (readonly Candidate[])[] = [[], [], [], []];
    let nextRecent = 0;
    for (let hit = finder.exec(text); hit !== null; hit = finder.exec(text)) {
      const at = hit.index;
      const found = hit[0];
      let lastList: readonly Candidate[] | undefined;
      for (let index = 0; index < 4; index++) {
        if (recentHits[index] === found) {
          lastList = recentLists[index]!;
          break;
        }
      }
      if (lastList === undefined) {
        lastList = candidatesOf(found);
        recentHits[nextRecent] = found;
        recentLists[nextRecent] = lastList;
        nextRecent = (nextRecent + 1) & 3;
      }
      // The kept match so far (`bestStop` -1: none).
      let bestStart = 0;
      let bestStop = -1;
      let bestOrder = -1;
      // The last rule whose gate refused at this position (-1: none).
      let refusedOrder = -1;
      let bestWhole = '';
      let bestGroups: (string | undefined)[] = NO_GROUPS;
      for (let index = 0; index < lastList.length; index++) {
        const { rule, needs } = lastList[index]!;
        if (needs !== undefined && !holdsAny(text, at, needs)) continue;
        const { regex, extend, back, accept, gate, coveredBy, refusedWith } = rule;
        if (coveredBy >= 0 && coveredBy === bestOrder) continue;
        if (refusedWith >= 0 && refusedWith === refusedOrder) continue;
        if (gate >= 0 && !gates[gate]!(text, at)) {
          refusedOrder = rule.order;
          continue;
        }
        regex.lastIndex = at;
        const match = regex.exec(text);
        if (match === null || match[0].length === 0) continue;
        const end = at + match[0].length;
        const stop = extend ? extend(text, end) : end;
        // The first rule that matches wins, unless a later one takes more of the text (a
        // routable GitLab token over the plain shape that stops at its `.`).
        if (stop <= bestStop) continue;
        const groups = match.slice(1);
        const start = back ? back(text, at, copied) : at;
        const whole = start === at && stop === end ? match[0] : text.slice(start, stop);
        if (accept && !accept(whole, groups, text, start)) continue;
        bestStart = start;
        bestStop = stop;
        bestOrder = rule.order;
        bestWhole = whole;
        bestGroups = groups;
      }
      if (bestStop >= 0) {
        // Rules of the same hit are tried in order: only the kept match is replaced.
        sink(bestStart, bestStop, replace(bestWhole, bestGroups));
        copied = bestStop;
        finder.lastIndex = bestStop;
      } else {
        // Triggers may overlap (`pass` inside `passpwd`): look again one character later.
        finder.lastIndex = at + 1;
      }
    }
  };
}
